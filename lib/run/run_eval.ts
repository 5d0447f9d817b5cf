/**
 * Running an evaluation: every selected task × `num_rollouts`, `max_concurrent`
 * episodes in flight, tasks pulled lazily and each finished episode appended to
 * `traces.jsonl` and released, then `summary.json` and the summary table.
 *
 * @module
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import process from "node:process";
import type { LoadedConfig } from "../config/load_config.ts";
import { InputError, toTraceError } from "../errors.ts";
import { startInterceptionServer } from "../model/interception_server.ts";
import { startOracleServer } from "../model/oracle.ts";
import { createProviderClient } from "../model/provider_client.ts";
import { runRollout } from "../rollout/rollout.ts";
import { withDeadline } from "../rollout/deadline.ts";
import { traceTask } from "../rollout/new_trace.ts";
import { TasksetView } from "../tasks/taskset_view.ts";
import type { TaskData } from "../tasks/task_data.ts";
import type { Episode } from "../trace/types.ts";
import { writeEvalJson } from "./config_dump.ts";
import { buildRolloutPlan } from "./plan.ts";
import { fileLogger, newLogAttempt, prepareRunDir } from "./run_dir.ts";
import { selectTasks } from "./select.ts";
import { renderSummary, rewardText, type RunSummary, SummaryAccumulator } from "./summary.ts";
import { TracesWriter } from "./traces_file.ts";

/** Options of {@link runEvalFromCli}. */
export interface RunEvalCliOptions {
  runDir: string;
  cwd: string;
  /** Progress and log lines (stderr in the CLI). */
  err?: (line: string) => void;
  /** Data output (stdout in the CLI). */
  out?: (line: string) => void;
  /** Cancels the run. */
  signal?: AbortSignal;
}

/** What a finished run produced. */
export interface RunResult {
  summary: RunSummary;
  runDir: string;
  cancelled: boolean;
}

/** Yields (task, rollout index) slots: every task × num_rollouts, tasks pulled lazily. */
async function* slots(
  view: TasksetView,
  rollouts: number,
): AsyncGenerator<{ task: TaskData; index: number }> {
  for await (const task of view) {
    for (let i = 0; i < rollouts; i++) yield { task, index: i };
  }
}

async function countTasks(view: TasksetView): Promise<number> {
  let n = 0;
  for await (const _ of view) n++;
  return n;
}

/** Runs a loaded config to completion. */
export async function runEval(
  loaded: LoadedConfig,
  options: RunEvalCliOptions,
): Promise<RunResult> {
  const config = loaded.config;
  const started = Date.now();
  const err = options.err ?? (() => {});
  const signal = options.signal ?? new AbortController().signal;
  const { taskset } = loaded.plugins;
  if (!taskset) throw new InputError("taskset_missing", "Cannot run: no taskset");
  const outputDir = resolve(options.cwd, config.output_dir);
  prepareRunDir(options.runDir, outputDir, { clean: config.clean, resume: config.resume });

  const tasksetConfig = { ...config.env.taskset } as Record<string, unknown>;
  if (config.env.taskset.system_prompt) {
    try {
      tasksetConfig.system_prompt = readFileSync(
        resolve(options.cwd, config.env.taskset.system_prompt),
        "utf8",
      );
    } catch {
      throw new InputError(
        "system_prompt_unreadable",
        `Cannot read env.taskset.system_prompt file "${config.env.taskset.system_prompt}"`,
      );
    }
  }
  const view = selectTasks(new TasksetView(taskset, tasksetConfig), config);
  const taskCount = await countTasks(view);
  const expected = taskCount * config.num_rollouts;

  const logDir = newLogAttempt(options.runDir);
  const logFile = fileLogger(join(logDir, "eval.log"));
  const log = (m: string) => {
    logFile("info", m);
    if (config.verbose) err(m);
  };
  const warn = (m: string) => {
    logFile("warn", m);
    err(`warning: ${m}`);
  };

  const oracle = config.model === "oracle" ? await startOracleServer() : null;
  const client = oracle
    ? createProviderClient({ baseUrl: oracle.url, apiKeyVar: null })
    : createProviderClient({
      baseUrl: config.client.base_url!,
      apiKeyVar: config.client.api_key_var,
      headers: config.client.headers,
    });
  const interception = await startInterceptionServer({
    log: (level, m) => level === "warn" ? warn(m) : logFile(level, m),
  });
  const plan = buildRolloutPlan({
    ...loaded,
    config: {
      ...config,
      env: { ...config.env, taskset: tasksetConfig as typeof config.env.taskset },
    },
  }, {
    client,
    interception,
    oracle,
    log,
    warn,
  });
  writeEvalJson(options.runDir, config);
  const writer = new TracesWriter(join(options.runDir, "traces.jsonl"));
  const envId = config.env.id ? `${config.env.id}+${config.env.taskset.id}` : config.env.taskset.id;
  const runInfo = {
    type: "eval" as const,
    id: randomUUID().replaceAll("-", ""),
    name: config.run.name!,
  };
  const acc = new SummaryAccumulator();
  const base = () => ({
    run: { name: config.run.name!, dir: options.runDir },
    model: config.model!,
    taskset: config.env.taskset.id,
    harness: config.env.agent.harness.id,
    runtime: config.env.agent.runtime.type,
    wall_time_s: (Date.now() - started) / 1000,
    output_dir: options.runDir,
    expected,
  });
  log(`run ${runInfo.name}: ${expected} rollouts (${taskCount} tasks × ${config.num_rollouts})`);

  const showProgress = config.display !== "none" && config.display !== "json";
  let lastProgress = 0;
  const progress = (force = false) => {
    if (!showProgress) return;
    const now = Date.now();
    if (!force && now - lastProgress < 2000) return;
    lastProgress = now;
    const s = acc.summary(base());
    err(
      `${s.counts.episodes}/${expected} · ${((now - started) / 1000).toFixed(1)}s · reward ${
        rewardText(s)
      } · err ${s.error_fraction === null ? "—" : s.error_fraction.toFixed(2)}`,
    );
  };

  const source = slots(view, config.num_rollouts);
  const envTimeout = config.env.timeout.episode;
  const runEpisode = async (task: TaskData): Promise<Episode> => {
    const identity = traceTask(taskset.id, task, taskset.key?.(task));
    const episode: Episode = {
      id: randomUUID().replaceAll("-", ""),
      env: { id: envId, name: envId },
      task: identity,
      group: null,
      run: runInfo,
      ok: false,
      errors: [],
      traces: [],
    };
    try {
      const trace = await withDeadline(
        envTimeout,
        signal,
        (s) => runRollout(plan, task, identity, s),
      );
      episode.traces.push(trace);
    } catch (e) {
      const rec = toTraceError(e, "EnvError");
      rec.type = "EnvError";
      if (envTimeout !== null && String(rec.message).includes("deadline")) {
        rec.message = `episode timed out after ${envTimeout}s`;
      }
      episode.errors.push(rec);
    }
    episode.ok = episode.errors.length === 0 && episode.traces.length > 0 &&
      episode.traces.every((t) => t.ok);
    return episode;
  };
  const worker = async () => {
    while (!signal.aborted) {
      const next = await source.next();
      if (next.done) return;
      const episode = await runEpisode(next.value.task);
      if (signal.aborted && !episode.ok) return;
      writer.append(episode);
      acc.add(episode);
      progress();
    }
  };
  try {
    await Promise.all(
      Array.from({ length: Math.min(config.max_concurrent, Math.max(1, expected)) }, worker),
    );
  } finally {
    writer.close();
    await interception.close();
    await oracle?.close();
    client.close();
  }
  progress(true);
  const summary = acc.summary(base());
  writeFileSync(join(options.runDir, "summary.json"), JSON.stringify(summary, null, 2) + "\n");
  log(`done: ${summary.counts.episodes}/${expected} episodes, reward ${rewardText(summary)}`);
  return { summary, runDir: options.runDir, cancelled: signal.aborted };
}

/** Runs the evaluation of a loaded config from the CLI; returns the exit code. */
export async function runEvalFromCli(
  loaded: LoadedConfig,
  options: RunEvalCliOptions,
): Promise<number> {
  const ctrl = new AbortController();
  let signals = 0;
  const onSignal = () => {
    signals++;
    if (signals === 1) {
      options.err?.("stopping: cancelling in-flight rollouts (signal again to exit at once)");
      ctrl.abort(new Error("interrupted"));
    } else process.exit(130);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const result = await runEval(loaded, { ...options, signal: ctrl.signal });
    const display = loaded.config.display;
    if (display === "json") options.out?.(JSON.stringify(result.summary, null, 2));
    else if (display !== "none") options.out?.(renderSummary(result.summary));
    return result.cancelled ? 130 : 0;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}
