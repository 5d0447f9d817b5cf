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
  readonly code: string;
  /** What the user can do about it. */
  readonly hint: string | undefined;
  /** Process exit code when this error ends the CLI (2 = bad input, 1 = internal). */
  readonly exitCode: number;

  constructor(
    code: string,
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
  constructor(code: string, message: string, options: VerifiersErrorOptions = {}) {
    super(code, message, { ...options, exitCode: 2 });
    this.name = "InputError";
  }
}

/** A config file or flag set that does not validate. Exit code 2. */
export class ConfigError extends InputError {
  /** Every problem found, one line each (the message joins them). */
  readonly problems: string[];
  constructor(problems: string[], options: VerifiersErrorOptions = {}) {
    super("config_invalid", problems.join("\n"), options);
    this.name = "ConfigError";
    this.problems = problems;
  }
}

/** A plugin id or specifier that cannot be resolved or loaded. Exit code 2. */
export class PluginError extends InputError {
  constructor(code: string, message: string, options: VerifiersErrorOptions = {}) {
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
  | "EnvError"
  | "RolloutError";

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
    super(type.replace(/Error$/, "").toLowerCase() + "_error", message, options);
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
