/**
 * `vf validate`'s engine: for every selected task, a fresh runtime, the task's `setup`, and
 * (gold check) the taskset's `validate` hook, with no model and no harness — Python v1's
 * `verifiers/v1/cli/validate.py` at a60a606. Each check has its deadline (`timeout.setup`,
 * else the task's own; `timeout.total` for the hook) and is cut there even when the hook
 * ignores its signal. Rows land in `results.jsonl` as they finish; a resume re-runs the
 * tasks without a final row (missing, errored, timed out). Selection, runtimes (tracked and
 * swept at the end), scheduling and the live display are those of `vf eval`.
 *
 * @module
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomBytes } from "node:crypto";
import type { LoadedConfig } from "../config/load_config.ts";
import type { HookContext, TasksetPlugin } from "../../kit/contract.ts";
import type { Runtime } from "../../kit/runtime/runtime.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { TraceTask } from "../../kit/trace/types.ts";
import { errorMessage, InputError } from "../../kit/errors.ts";
import { DeadlineExceeded, withDeadline } from "../rollout/deadline.ts";
import { newTrace, taskTypeName, traceTask } from "../rollout/new_trace.ts";
import { savedConfig, writeOutputAtomic } from "./config_dump.ts";
import { sidecarPath } from "../config/sidecar.ts";
import { checkInputs } from "./run_inputs.ts";
import { fileLogger, prepareRunDir } from "./run_dir.ts";
import { RuntimeTracker } from "./runtime_tracker.ts";
import { newPoolStats, runPool } from "./scheduler.ts";
import type { DisplayInit, LiveDisplay, ProgressSnapshot } from "./progress.ts";
import {
  appendRow,
  loadResults,
  RESULTS_FILE,
  summarize,
  type ValidateMode,
  type ValidateRow,
  writeValidateSummary,
} from "./validate_results.ts";

/** The validate-only settings (Python's `only_setup`/`only_gold`, `timeout`). */
export interface ValidateSettings {
  mode: ValidateMode;
  /** Seconds for `setup`; null: the task's own `timeout.setup` (else none). */
  setupS: number | null;
  /** Seconds for the `validate` hook; null: none. */
  totalS: number | null;
}

/** Options of {@link runValidate}. */
export interface RunValidateOptions {
  runDir: string;
  cwd: string;
  signal: AbortSignal;
  /** Messages for the user (stderr). */
  err(line: string): void;
  display?: (init: DisplayInit) => LiveDisplay;
}

/** What a validate run produced. */
export interface ValidateResult {
  rows: ValidateRow[];
  summary: Record<string, unknown>;
  cancelled: boolean;
  /** Set when a resume found nothing owed. */
  nothingToResume?: string;
}

/** The config file a validate run keeps (Python's name). */
export const VALIDATE_CONFIG = "validate.json";

/** The default run name: `<taskset>--validate--<8 hex>`, lowercased (Python's). */
export function validateRunName(tasksetId: string): string {
  const id = tasksetId.replace(/\/mod\.[jt]s$/, "").replace(/\.[mc]?[jt]s$/, "").split("/").pop();
  const base = (id ?? "taskset").toLowerCase().replace(/[^a-z0-9._+-]+/g, "-");
  return `${base}--validate--${randomBytes(4).toString("hex")}`;
}

/** Writes `configs/validate.json` in Python's ValidateConfig layout (extras in the sidecar). */
function writeValidateConfig(runDir: string, loaded: LoadedConfig, s: ValidateSettings): void {
  const { config } = loaded;
  const { dump, side } = savedConfig(config);
  const env = dump.env as { taskset: unknown; agent: { runtime: unknown } };
  const saved = {
    run: { name: config.run.name ?? null, dir: config.run.dir ?? null },
    taskset: env.taskset,
    runtime: env.agent.runtime,
    timeout: { setup: s.setupS, total: s.totalS },
    only_setup: s.mode === "setup",
    only_gold: s.mode === "gold",
    num_tasks: config.num_tasks,
    shuffle: config.shuffle,
    max_concurrent: config.max_concurrent,
    verbose: config.verbose,
    rich: config.display !== "plain" && config.display !== "none",
    output_dir: config.output_dir,
  };
  writeOutputAtomic(sidecarPath(runDir), JSON.stringify({ env: side.env ?? {} }, null, 2) + "\n");
  writeOutputAtomic(
    join(runDir, "configs", VALIDATE_CONFIG),
    JSON.stringify(saved, null, 2) + "\n",
  );
}

/** One selected task. */
interface Selected {
  position: number;
  task: TaskData;
  identity: TraceTask;
}

/** Runs one check of one task in a fresh runtime. */
async function check(
  loaded: LoadedConfig,
  plugin: LoadedConfig["plugins"]["runtime"],
  item: Selected,
  mode: "gold" | "setup",
  s: ValidateSettings,
  signal: AbortSignal,
): Promise<ValidateRow> {
  const { config } = loaded;
  const taskset = loaded.plugins.taskset as TasksetPlugin;
  const started = Date.now();
  const idx = typeof item.task.idx === "number" ? item.task.idx : null;
  let valid = false;
  let failure: unknown = null;
  let stage = "setup";
  let runtime: Runtime | null = null;
  try {
    runtime = plugin.create(config.env.agent.runtime, {
      name: `validate-${mode}-${idx ?? item.position}-${randomBytes(4).toString("hex")}`,
    });
    const trace = newTrace(item.identity, { name: "validate" }, config.env.agent.runtime.type);
    const rt = runtime;
    const ctx = (sig: AbortSignal): HookContext => ({
      task: item.task,
      trace,
      runtime: rt,
      config: config.env.taskset,
      signal: sig,
    });
    stage = "runtime start";
    await runtime.start({ signal });
    stage = "setup";
    const setupS = s.setupS ?? item.task.timeout?.setup ?? null;
    if (taskset.setup) await withDeadline(setupS, signal, (sig) => taskset.setup!(ctx(sig)));
    if (mode === "gold") {
      stage = "validate";
      const validate = taskset.validate;
      valid = validate
        ? (await withDeadline(s.totalS, signal, (sig) => validate(ctx(sig)))) === true
        : true;
    } else valid = true;
  } catch (err) {
    failure = err;
  } finally {
    if (runtime) {
      if (runtime.isLocal) await runtime.stop();
      else await runtime.stopConfirmed().catch(() => {}); // the tracker's sweep names it
    }
  }
  const timedOut = failure instanceof DeadlineExceeded;
  return {
    index: idx,
    name: typeof item.task.name === "string" ? item.task.name : null,
    mode,
    valid,
    reason: valid ? "valid" : timedOut ? "timeout" : failure !== null ? "error" : "invalid",
    elapsed: Math.round((Date.now() - started) / 10) / 100,
    error: failure === null
      ? null
      : timedOut
      ? `${stage} timed out after ${(failure as DeadlineExceeded).seconds}s`
      : `${stage}: ${errorMessage(failure)}`,
    error_type: failure === null
      ? null
      : timedOut
      ? "TimeoutError"
      : failure instanceof Error
      ? failure.name
      : "Error",
  };
}

/** Both checks of a task, as one `all` row (Python's `_run_all`). */
function combined(gold: ValidateRow, setup: ValidateRow, elapsed: number): ValidateRow {
  const rows = [gold, setup];
  const failed = rows.filter((r) => !r.valid);
  const reasons = new Set(rows.map((r) => r.reason));
  const types = [...new Set(failed.map((r) => r.error_type).filter((t) => t !== null))].sort();
  return {
    index: gold.index,
    name: gold.name,
    mode: "all",
    valid: failed.length === 0,
    reason: failed.length === 0
      ? "valid"
      : reasons.has("error")
      ? "error"
      : reasons.has("timeout")
      ? "timeout"
      : "invalid",
    elapsed,
    error: failed.map((r) => `${r.mode}: ${r.error ?? r.reason}`).join("; ") || null,
    error_type: types.join("+") || null,
    gold,
    setup,
  };
}

/** Runs `vf validate` for a loaded config. */
export async function runValidate(
  loaded: LoadedConfig,
  s: ValidateSettings,
  options: RunValidateOptions,
): Promise<ValidateResult> {
  const { config } = loaded;
  const { runDir, signal } = options;
  const resume = config.resume;
  // selection and input checks as vf eval's; the run folder is this command's own
  const inputs = await checkInputs(
    { ...loaded, config: { ...config, resume: false, clean: false } },
    { runDir: null, cwd: options.cwd },
  );
  if (resume && !existsSync(join(runDir, "configs", VALIDATE_CONFIG))) {
    throw new InputError("resume_no_run", `Cannot resume: there is no validate run in ${runDir}`, {
      hint: `a validate run folder holds configs/${VALIDATE_CONFIG}`,
    });
  }
  prepareRunDir(runDir, resolve(options.cwd, config.output_dir), {
    clean: config.clean,
    resume,
    resultsFile: RESULTS_FILE,
  });
  const type = taskTypeName(inputs.taskset);
  const selected: Selected[] = [];
  for await (const task of inputs.view) {
    const identity = traceTask(type, task, inputs.taskset.key?.(task));
    selected.push({ position: selected.length, task, identity });
  }
  const keys = selected.map((t) => t.identity.hash);
  let rows: ValidateRow[] = [];
  let owed = new Set(selected.map((t) => t.position));
  if (resume) ({ rows, owed } = loadResults(runDir, keys, s.mode));
  else {
    writeValidateConfig(runDir, loaded, s);
    writeFileSync(join(runDir, RESULTS_FILE), "");
  }
  const total = selected.length;
  writeValidateSummary(runDir, summarize(rows, total, s.mode));
  mkdirSync(join(runDir, "logs"), { recursive: true });
  const log = fileLogger(join(runDir, "logs", "validate.log"));
  const checks = s.mode === "all" ? "gold+setup" : s.mode;
  log(
    "info",
    `${resume ? "resuming" : "validating"} ${owed.size}/${total} task(s) from ` +
      `${config.env.taskset.id} on the ${config.env.agent.runtime.type} runtime (${checks})`,
  );
  if (owed.size === 0) {
    const message = `nothing to resume: all ${total} task(s) are valid or invalid`;
    log("info", message);
    log.close();
    return {
      rows,
      summary: summarize(rows, total, s.mode),
      cancelled: false,
      nothingToResume: message,
    };
  }
  const tracker = new RuntimeTracker();
  const plugin = tracker.wrap(loaded.plugins.runtime, { run: runDir, log: options.err });
  const started = Date.now();
  const kept = rows.length;
  const pool = newPoolStats();
  const errors = new Map<string, { type: string; count: number; last: string }>();
  const snapshot = (): ProgressSnapshot => {
    const validCount = rows.filter((r) => r.valid).length;
    return {
      done: rows.length,
      total,
      kept,
      inFlight: pool.inFlight,
      elapsedS: (Date.now() - started) / 1000,
      reward: { mean: rows.length ? validCount / rows.length : null, mean_all: null },
      rewardLabel: "valid",
      erroredTraces: 0,
      erroredEpisodes: rows.length - validCount,
      errors: [...errors.values()],
    };
  };
  const display = options.display?.({
    run: {
      envId: config.env.taskset.id,
      harness: "no",
      runtime: config.env.agent.runtime.type,
      model: null,
      baseUrl: "",
      tasks: total,
      rollouts: 1,
      maxConcurrent: config.max_concurrent,
      kept,
      owed: owed.size,
      runDir,
    },
    snapshot,
  }) ?? null;
  display?.start();
  let failure: unknown = null;
  try {
    await runPool<Selected, ValidateRow | null>({
      source: (async function* () {
        yield* selected.filter((t) => owed.has(t.position));
      })(),
      concurrency: Math.min(config.max_concurrent, owed.size),
      signal,
      stats: pool,
      run: async (item) => {
        const t0 = Date.now();
        const gold = s.mode === "setup"
          ? null
          : await check(loaded, plugin, item, "gold", s, signal);
        const setup = s.mode === "gold"
          ? null
          : await check(loaded, plugin, item, "setup", s, signal);
        if (signal.aborted) return null; // cancelled mid-way: owed again on resume
        const row = gold && setup
          ? combined(gold, setup, Math.round((Date.now() - t0) / 10) / 100)
          : (gold ?? setup)!;
        return { ...row, task_position: item.position, task_key: item.identity.hash };
      },
      onResult: (row) => {
        if (row === null) return;
        appendRow(runDir, row);
        rows.push(row);
        writeValidateSummary(runDir, summarize(rows, total, s.mode));
        if (row.error_type) {
          const e = errors.get(row.error_type) ?? { type: row.error_type, count: 0, last: "" };
          e.count++;
          e.last = row.error ?? "";
          errors.set(row.error_type, e);
        }
        const detail = row.error ? ` - ${row.error}` : "";
        log(
          "info",
          `idx=${row.index} valid=${row.valid} reason=${row.reason} (${row.elapsed}s)${detail}`,
        );
        display?.update();
      },
    });
  } catch (err) {
    failure = err;
  }
  for (const u of await tracker.sweep()) {
    const m = `sandbox not confirmed stopped: ${u.type} ${u.id ?? "(no id)"}: ${u.error}`;
    log("warn", m);
    options.err(`warning: ${m}`);
  }
  display?.stop();
  rows.sort((a, b) => (a.task_position ?? 0) - (b.task_position ?? 0));
  const summary = summarize(rows, total, s.mode);
  writeValidateSummary(runDir, summary);
  log("info", `done: ${rows.filter((r) => r.valid).length}/${total} valid`);
  log.close();
  if (failure !== null) throw failure;
  return { rows, summary, cancelled: signal.aborted };
}
