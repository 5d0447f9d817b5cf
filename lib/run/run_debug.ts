/**
 * `vf debug`'s engine: for every selected task, a fresh runtime, the task's `setup`, then
 * one action — an inline command run as `sh -lc <command>`, or a host script uploaded and
 * run — and a trace per task with what happened in `info.debug` (Python v1's
 * `verifiers/v1/cli/debug.py` at a60a606: the same fields, reasons and timing spans).
 * `timeout.setup` (else the task's own) bounds setup, `timeout.total` the action. Traces
 * are appended to `traces.jsonl` as single-trace episodes as each task finishes.
 *
 * @module
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes, randomUUID } from "node:crypto";
import type { LoadedConfig } from "../config/load_config.ts";
import type { HookContext, TasksetPlugin } from "../../kit/contract.ts";
import type { ProgramResult, Runtime } from "../../kit/runtime/runtime.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { Trace } from "../../kit/trace/types.ts";
import { errorMessage, toTraceError } from "../../kit/errors.ts";
import { splitRuntimeConfig } from "../../kit/runtime/wire.ts";
import { DeadlineExceeded, nowSeconds, withDeadline } from "../rollout/deadline.ts";
import { newTrace, taskTypeName, traceTask } from "../rollout/new_trace.ts";
import { checkInputs } from "./run_inputs.ts";
import { RuntimeTracker } from "./runtime_tracker.ts";
import { runPool } from "./scheduler.ts";
import { TracesWriter } from "./traces_file.ts";
import { savedConfig, writeOutputAtomic } from "./config_dump.ts";

/** What runs after setup. */
export type DebugAction = { command: string } | { scriptPath: string };

/** Options of {@link runDebug}. */
export interface RunDebugOptions {
  outDir: string;
  cwd: string;
  action: DebugAction;
  setupS: number | null;
  totalS: number | null;
  signal: AbortSignal;
  err(line: string): void;
}

/** `info.debug` of one task's trace. */
export type DebugInfo = Record<string, unknown> & { ok: boolean; reason: string };

function sh(runtime: Runtime, command: string, signal: AbortSignal): Promise<ProgramResult> {
  return runtime.run(["sh", "-lc", command], { signal });
}

function quote(s: string): string {
  return `'${s.replaceAll("'", "'\\''")}'`;
}

/** Runs the action under `totalS`; the fields Python's `run_action` records. */
async function runAction(
  runtime: Runtime,
  name: string,
  action: DebugAction,
  totalS: number | null,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const started = Date.now();
  let head: Record<string, unknown>;
  let work: (s: AbortSignal) => Promise<ProgramResult>;
  if ("command" in action) {
    head = { action: "command", command: action.command };
    work = (s) => sh(runtime, action.command, s);
  } else {
    // outside the task's workdir, so the script does not show in the state being inspected
    const remote = `/tmp/${name}-script.sh`;
    const command = `chmod +x ${quote(remote)} && ${quote(remote)}`;
    head = {
      action: "script",
      script_path: action.scriptPath,
      remote_script_path: remote,
      command,
    };
    const bytes = readFileSync(action.scriptPath);
    work = async (s) => {
      await runtime.write(remote, bytes);
      return await sh(runtime, command, s);
    };
  }
  const elapsed = () => Math.round((Date.now() - started) / 10) / 100;
  try {
    const r = await withDeadline(totalS, signal, work);
    const ok = r.exitCode === 0;
    return {
      ...head,
      ok,
      reason: ok ? "pass" : "nonzero_exit",
      exit_code: r.exitCode,
      elapsed: elapsed(),
      stdout: r.stdout,
      stderr: r.stderr,
    };
  } catch (err) {
    return { ...head, ...failureInfo(err, "debug action", totalS, elapsed()) };
  }
}

function failureInfo(err: unknown, stage: string, timeoutS: number | null, elapsed: number) {
  const timedOut = err instanceof DeadlineExceeded;
  return {
    ok: false,
    reason: timedOut ? "timeout" : "error",
    exit_code: null,
    elapsed,
    error: timedOut ? `${stage} timed out after ${timeoutS}s` : errorMessage(err),
    error_type: timedOut ? "TimeoutError" : err instanceof Error ? err.name : "Error",
    stdout: "",
    stderr: "",
  };
}

/** Sets up one task and runs the action; the trace carries `info.debug`. */
async function debugTask(
  loaded: LoadedConfig,
  plugin: LoadedConfig["plugins"]["runtime"],
  task: TaskData,
  options: RunDebugOptions,
): Promise<Trace> {
  const { config } = loaded;
  const taskset = loaded.plugins.taskset as TasksetPlugin;
  const identity = traceTask(taskTypeName(taskset), task, taskset.key?.(task));
  const runtimeConfig = config.env.agent.runtime;
  const trace = newTrace(
    identity,
    { runtime: splitRuntimeConfig(runtimeConfig).wire },
    runtimeConfig.type,
  );
  trace.agent.name = "debug";
  trace.agent.trainable = false;
  const name = `debug-${String(task.idx ?? "x")}-${randomBytes(4).toString("hex")}`;
  let debug: DebugInfo = {
    task: { idx: task.idx ?? null, name: task.name ?? null, workdir: task.workdir ?? null },
    action: "command" in options.action ? "command" : "script",
    ok: false,
    reason: "not_run",
  };
  const { signal } = options;
  const setupS = options.setupS ?? task.timeout?.setup ?? null;
  let runtime: Runtime | null = null;
  let stage = "boot";
  const t = trace.timing;
  const started = Date.now();
  try {
    runtime = plugin.create(runtimeConfig, { name });
    t.boot.start = nowSeconds();
    await runtime.start({ signal });
    trace.agent.runtime.id = runtime.info.id;
    t.boot.end = t.setup.start = nowSeconds();
    stage = "setup";
    const rt = runtime;
    const ctx = (s: AbortSignal): HookContext => ({
      task,
      trace,
      runtime: rt,
      config: config.env.taskset,
      signal: s,
    });
    if (taskset.setup) await withDeadline(setupS, signal, (s) => taskset.setup!(ctx(s)));
    t.setup.end = t.agent.start = nowSeconds();
    stage = "debug action";
    debug = {
      ...debug,
      ...(await runAction(runtime, name, options.action, options.totalS, signal)),
    };
    t.agent.end = nowSeconds();
    if (!debug.ok) {
      const message = String(debug.error ?? `debug action failed: ${debug.reason}`);
      trace.errors.push({
        type: String(debug.error_type ?? "DebugActionError"),
        message,
        status_code: null,
        traceback: null,
      });
    }
    trace.stop_condition = debug.reason;
  } catch (err) {
    const now = nowSeconds();
    for (const span of [t.boot, t.setup]) if (span.start && !span.end) span.end = now;
    const elapsed = Math.round((Date.now() - started) / 10) / 100;
    debug = { ...debug, ...failureInfo(err, stage, stage === "setup" ? setupS : null, elapsed) };
    const e = toTraceError(err, "TaskError");
    if (err instanceof DeadlineExceeded) e.message = String(debug.error);
    trace.errors.push(e);
    trace.stop_condition = "error";
  } finally {
    trace.info.debug = debug;
    if (runtime) {
      if (runtime.isLocal) await runtime.stop();
      else await runtime.stopConfirmed().catch(() => {}); // the tracker's sweep names it
    }
  }
  trace.ok = trace.errors.length === 0;
  trace.is_completed = true;
  return trace;
}

/** Runs `vf debug` for a loaded config; returns each task's `info.debug`, in task order. */
export async function runDebug(
  loaded: LoadedConfig,
  options: RunDebugOptions,
): Promise<DebugInfo[]> {
  const { config } = loaded;
  const { outDir } = options;
  const inputs = await checkInputs(
    { ...loaded, config: { ...config, resume: false, clean: false } },
    { runDir: null, cwd: options.cwd },
  );
  const tasks: TaskData[] = [];
  for await (const task of inputs.view) tasks.push(task);
  mkdirSync(join(outDir, "configs"), { recursive: true });
  const { dump } = savedConfig(config);
  const env = dump.env as { taskset: unknown; agent: { runtime: unknown } };
  writeOutputAtomic(
    join(outDir, "configs", "debug.json"),
    JSON.stringify(
      {
        taskset: env.taskset,
        runtime: env.agent.runtime,
        command: "command" in options.action ? options.action.command : null,
        script_path: "scriptPath" in options.action ? options.action.scriptPath : null,
        timeout: { setup: options.setupS, total: options.totalS },
        num_tasks: config.num_tasks,
        shuffle: config.shuffle,
        max_concurrent: config.max_concurrent,
        verbose: config.verbose,
        output_dir: outDir,
      },
      null,
      2,
    ) + "\n",
  );
  writeFileSync(join(outDir, "traces.jsonl"), "");
  const tracker = new RuntimeTracker();
  const plugin = tracker.wrap(loaded.plugins.runtime, { run: outDir, log: options.err });
  const writer = new TracesWriter(join(outDir, "traces.jsonl"));
  const infos: DebugInfo[] = new Array(tasks.length);
  let failure: unknown = null;
  try {
    await runPool<number, Trace>({
      source: (async function* () {
        yield* tasks.keys();
      })(),
      concurrency: Math.max(1, Math.min(config.max_concurrent, tasks.length)),
      signal: options.signal,
      run: (i) => debugTask(loaded, plugin, tasks[i]!, options),
      onResult: (trace, i) => {
        const info = trace.info.debug as DebugInfo;
        infos[i] = info;
        writer.append({
          id: randomUUID().replaceAll("-", ""),
          env: { id: config.env.taskset.id },
          task: trace.task,
          ok: trace.ok,
          errors: [],
          traces: [trace],
        });
        const detail = info.error ? ` - ${String(info.error)}` : "";
        options.err(`idx=${String(tasks[i]!.idx)} ok=${info.ok} reason=${info.reason}${detail}`);
      },
    });
  } catch (err) {
    failure = err;
  }
  for (const u of await tracker.sweep()) {
    options.err(
      `warning: sandbox not confirmed stopped: ${u.type} ${u.id ?? "(no id)"}: ${u.error}`,
    );
  }
  try {
    writer.close();
  } catch (err) {
    failure ??= err;
  }
  if (failure !== null) throw failure;
  return infos.filter((i) => i !== undefined);
}
