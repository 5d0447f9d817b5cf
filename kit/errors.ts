/**
 * The error model. Every error verifiers-ts raises on purpose is a
 * {@link VerifiersError}: a stable `code`, a human `message`, an optional `hint`
 * telling the user what to do, and the `exitCode` the CLI uses for it.
 *
 * Two families:
 * - input errors (config, flags, plugin ids): exit code 2, printed without a stack;
 * - rollout errors (provider, harness, sandbox, task): recorded in a trace's `errors`.
 *
 * @module
 */
import { quote } from "./util/quote.ts";

/**
 * Every code an error raised on purpose carries, in one union the compiler checks: a
 * `new InputError("code", ...)` with a code not listed here does not type-check. Stable:
 * scripts and `--json` diagnostics may match on them.
 */
export type ErrorCode =
  // bad input: config, flags, arguments
  | "config_invalid"
  | "config_file_without_at"
  | "config_not_data"
  | "config_not_object"
  | "usage"
  | "seed_invalid"
  | "num_tasks_invalid"
  | "help_in_script"
  | "dry_run_in_script"
  | "episodes_not_kept"
  | "episodes_taken"
  | "script_not_found"
  | "init_target_exists"
  | "bridge_argument_missing_value"
  | "bridge_argument_unsupported"
  | "bridge_header_invalid"
  | "bridge_provider_without_url"
  // files read or written
  | "file_unreadable"
  | "file_not_utf8"
  | "file_too_large"
  | "system_prompt_unreadable"
  | "judge_prompt_unreadable"
  | "taskset_file_missing"
  | "taskset_file_invalid"
  | "output_unwritable"
  // runs, resumes, views
  | "taskset_missing"
  | "taskset_infinite"
  | "taskset_load_invalid"
  | "taskset_load_failed"
  | "no_tasks"
  | "judge_invalid"
  | "clean_outside_output"
  | "run_dir_has_results"
  | "resume_config_differs"
  | "resume_config_unreadable"
  | "resume_needs_dir"
  | "resume_needs_run"
  | "resume_no_run"
  | "resume_secrets_masked"
  | "resume_traces_not_file"
  | "shard_invalid"
  | "shard_leased"
  | "shard_mismatch"
  | "shards_missing"
  | "shards_owed"
  | "view_no_run"
  | "view_out_dir"
  | "view_out_write"
  | "view_port"
  // plugins and plugged functions
  | "plugin_ambiguous"
  | "plugin_fetch_failed"
  | "plugin_id_missing"
  | "plugin_import_failed"
  | "plugin_integrity_mismatch"
  | "plugin_integrity_missing"
  | "plugin_kind_unknown"
  | "plugin_lock_frozen"
  | "plugin_lock_invalid"
  | "plugin_lock_mismatch"
  | "plugin_lock_missing"
  | "plugin_no_exports"
  | "plugin_not_found"
  | "plugin_package_invalid"
  | "plugin_specifier_invalid"
  | "plugin_unsupported_specifier"
  | "plugin_version_not_found"
  | "plugin_wrong_kind"
  | "plugged_fn_import_failed"
  | "plugged_fn_invalid"
  | "plugged_fn_not_found"
  | "plugged_fn_not_function"
  | "plugged_hook_unknown"
  // recorded in traces (see RolloutError)
  | "provider_error"
  | "harness_error"
  | "sandbox_error"
  | "task_error"
  | "toolset_error"
  | "env_error"
  | "rollout_error";

/** Options shared by every {@link VerifiersError}. */
export interface VerifiersErrorOptions {
  /** What the user can do about it (undefined: nothing to add). */
  hint?: string | undefined;

  /** The underlying error. */
  cause?: unknown;
}

/** Base class of every error raised on purpose by verifiers-ts. */
export class VerifiersError extends Error {
  /** Stable machine-readable code, e.g. `config_invalid`. */
  readonly code: ErrorCode;
  /** What the user can do about it. */
  readonly hint: string | undefined;
  /** Process exit code when this error ends the CLI (2 = bad input, 1 = internal). */
  readonly exitCode: number;

  constructor(
    code: ErrorCode,
    message: string,
    options: VerifiersErrorOptions & { exitCode?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "VerifiersError";
    this.code = code;
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? 1;
  }
}

/** Bad user input: a config file, a flag, a plugin id. Exit code 2. */
export class InputError extends VerifiersError {
  constructor(code: ErrorCode, message: string, options: VerifiersErrorOptions = {}) {
    super(code, message, { ...options, exitCode: 2 });
    this.name = "InputError";
  }
}

/** One problem of a config, as data: where, what, and what to do. */
export interface ConfigIssue {
  /**
   * Where the value was set: a flag (`--env.agent.max-turns`), `file: toml.path`, a
   * dotted config path, or `""` when the problem is not about one value.
   */
  path: string;
  /** What is wrong, without the location. */
  message: string;
  /** What to do about this one problem (the error's own hint covers them all). */
  hint?: string;
}

/** One line of a {@link ConfigIssue}: `path: message (hint: ...)`. */
export function renderConfigIssue(issue: ConfigIssue): string {
  const where = quote(issue.path, { bare: true });
  const text = issue.path === "" ? issue.message : `${where}: ${issue.message}`;
  return issue.hint === undefined ? text : `${text} (hint: ${issue.hint})`;
}

/** A config file or flag set that does not validate. Exit code 2. */
export class ConfigError extends InputError {
  /** Every problem found, as data (for `--json` diagnostics); the message renders them. */
  readonly issues: readonly ConfigIssue[];
  /**
   * Every problem found, each an issue or (for one not about a single value) a line of
   * text, which becomes an issue without a path.
   */
  constructor(issues: readonly (ConfigIssue | string)[], options: VerifiersErrorOptions = {}) {
    const all = issues.map((i) => typeof i === "string" ? { path: "", message: i } : i);
    super("config_invalid", all.map(renderConfigIssue).join("\n"), options);
    this.name = "ConfigError";
    this.issues = all;
  }

  /** Every problem found, one line each (the message joins them). */
  get problems(): string[] {
    return this.issues.map(renderConfigIssue);
  }
}

/** A plugin id or specifier that cannot be resolved or loaded. Exit code 2. */
export class PluginError extends InputError {
  constructor(code: ErrorCode, message: string, options: VerifiersErrorOptions = {}) {
    super(code, message, options);
    this.name = "PluginError";
  }
}

/** Type names of the errors a rollout can record, as in Python `verifiers`. */
export type RolloutErrorType =
  | "ProviderError"
  | "HarnessError"
  | "SandboxError"
  | "TaskError"
  | "ToolsetError"
  | "EnvError"
  | "RolloutError";

/** The code of each rollout error type. */
const ROLLOUT_ERROR_CODES: Record<RolloutErrorType, ErrorCode> = {
  ProviderError: "provider_error",
  HarnessError: "harness_error",
  SandboxError: "sandbox_error",
  TaskError: "task_error",
  ToolsetError: "toolset_error",
  EnvError: "env_error",
  RolloutError: "rollout_error",
};

/** Base of the errors that end up in a trace's `errors` list instead of crashing the run. */
export class RolloutError extends VerifiersError {
  /** The type name recorded in the trace. */
  readonly type: RolloutErrorType;
  /** HTTP status for provider errors, else null. */
  readonly statusCode: number | null;
  constructor(
    type: RolloutErrorType,
    message: string,
    options: VerifiersErrorOptions & { statusCode?: number | null } = {},
  ) {
    super(ROLLOUT_ERROR_CODES[type], message, options);
    this.name = type;
    this.type = type;
    this.statusCode = options.statusCode ?? null;
  }
}

/** The model provider failed (HTTP status kept). */
export class ProviderError extends RolloutError {
  constructor(message: string, statusCode: number | null, options: VerifiersErrorOptions = {}) {
    super("ProviderError", message, { ...options, statusCode });
  }
}

/** The harness (agent program) failed or ran out of time. */
export class HarnessError extends RolloutError {
  constructor(message: string, options: VerifiersErrorOptions = {}) {
    super("HarnessError", message, options);
  }
}

/** The runtime (sandbox) failed: start, exec, file transfer, teardown. */
export class SandboxError extends RolloutError {
  constructor(
    message: string,
    options: VerifiersErrorOptions & { statusCode?: number | null } = {},
  ) {
    super("SandboxError", message, options);
  }
}

/**
 * A runtime's provider credentials are missing: a sandbox error inside a run (each
 * rollout records it), and bad input (exit 2) when it ends a command such as
 * `vf sandbox exec`.
 */
export class MissingCredentialsError extends SandboxError {
  override readonly exitCode = 2;
}

/** A task hook (setup, finalize, scoring, judge) failed. */
export class TaskError extends RolloutError {
  constructor(message: string, options: VerifiersErrorOptions = {}) {
    super("TaskError", message, options);
  }
}

/** A toolset's MCP server could not be started, reached or initialized. */
export class ToolsetError extends RolloutError {
  constructor(message: string, options: VerifiersErrorOptions = {}) {
    super("ToolsetError", message, options);
  }
}

/** The shape of one entry of a trace's `errors` list. */
export interface TraceErrorRecord {
  type: string;
  message: string;
  status_code: number | null;
  traceback: string | null;
}

/**
 * A trace error record without a traceback, shaped as Python's `Error`
 * (verifiers/v1/trace.py@a60a606).
 */
export function traceErrorRecord(
  type: string,
  message: string,
  statusCode: number | null = null,
): TraceErrorRecord {
  return { type, message, status_code: statusCode, traceback: null };
}

/** Turns anything thrown inside a rollout into a trace error record of the given boundary. */
export function toTraceError(
  err: unknown,
  boundary: RolloutErrorType = "RolloutError",
): TraceErrorRecord {
  if (err instanceof RolloutError) {
    return traceErrorRecord(err.type, err.message, err.statusCode);
  }
  const message = err instanceof Error ? err.message : String(err);
  const traceback = err instanceof Error && err.stack ? err.stack : null;
  return { type: boundary, message, status_code: null, traceback };
}

/** An error as data, for a machine-readable (`--json`) diagnostic. */
export interface ErrorReport {
  code: ErrorCode;
  message: string;
  hint: string | null;
  exit_code: number;
  /** The problems of a {@link ConfigError}, else absent. */
  issues?: ConfigIssue[];
}

/** The data of an error raised on purpose (see {@link ErrorReport}). */
export function errorReport(err: VerifiersError): ErrorReport {
  return {
    code: err.code,
    message: err.message,
    hint: err.hint ?? null,
    exit_code: err.exitCode,
    ...(err instanceof ConfigError ? { issues: [...err.issues] } : {}),
  };
}

/** Renders an error for the terminal: message, then `hint: ...` when there is one. No stack. */
export function formatError(err: VerifiersError): string {
  return err.hint ? `error: ${err.message}\nhint: ${err.hint}` : `error: ${err.message}`;
}

/** The message of anything thrown: an Error's message, a `{message}` object's, else `String()`. */
export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "object" && err !== null && "message" in err) {
    return String((err as { message: unknown }).message);
  }
  return String(err);
}
