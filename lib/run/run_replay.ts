/**
 * `vf replay`'s engine: re-scores a finished run's saved traces with the layered config's
 * rewards, metrics and judges, without sampling again (Python v1's
 * `verifiers/v1/cli/replay.py` at a60a606). Each selected trace is copied `num_rescores`
 * times, its recorded scores cleared (`rewards`, `metrics`, `extra_usage`,
 * `info.judge`), then scored by the same scoring plan `vf eval` builds; hooks get no
 * runtime, and those marked `needsRuntime` are skipped (as Python skips the signals that
 * take a runtime). A trace whose rollout errored is written unchanged. Every result is appended
 * as its own single-trace episode to the new run's `traces.jsonl` as it lands; the source
 * is only read. `summary.json` (our own file) gives, per task, the rescored rewards'
 * mean, spread and the source's reward.
 *
 * @module
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { LoadedConfig } from "../config/load_config.ts";
import type { Trace } from "../../kit/trace/types.ts";
import { InputError } from "../../kit/errors.ts";
import { traceReward } from "../../kit/trace/derived.ts";
import { scoreTrace } from "../rollout/scoring.ts";
import { checkInputs } from "./run_inputs.ts";
import { openRunLog } from "./run_log.ts";
import { fileLogger } from "./run_dir.ts";
import { startServices } from "./run_services.ts";
import { newPoolStats, runPool } from "./scheduler.ts";
import { readLines, TracesWriter } from "./traces_file.ts";
import type { DisplayInit, LiveDisplay, ProgressSnapshot } from "./progress.ts";
import { writeOutputAtomic } from "./config_dump.ts";
import { sortedJson } from "./validate_results.ts";

/** Options of {@link runReplay}. */
export interface RunReplayOptions {
  source: string;
  outDir: string;
  cwd: string;
  /** How many saved traces to re-score (null: all). */
  numTraces: number | null;
  /** Scores per trace. */
  numRescores: number;
  signal: AbortSignal;
  err(line: string): void;
  display?: (init: DisplayInit) => LiveDisplay;
}

/** One task's rescored rewards. */
export interface TaskVariance {
  key: string;
  idx: unknown;
  /** The rewards of its rescores, in order. */
  rewards: number[];
  mean: number | null;
  /** Population standard deviation of `rewards` (0 for one score). */
  std: number | null;
  /** The rewards the source run recorded for its traces of the task. */
  source_rewards: number[];
}

/** What a replay produced. */
export interface ReplayResult {
  summary: {
    source: string;
    traces: number;
    rescores: number;
    scored: number;
    skipped: number;
    errored: number;
    /** Rewards and metrics not run: they need a runtime. */
    skipped_signals: string[];
    tasks: TaskVariance[];
  };
  cancelled: boolean;
}

/** The saved traces of a run, each with its episode's env id (torn or malformed lines skipped). */
export function readSourceTraces(source: string): { trace: Trace; env: string }[] {
  const path = join(source, "traces.jsonl");
  if (!existsSync(path)) {
    throw new InputError("resume_no_run", `Cannot replay ${source}: it holds no traces.jsonl`, {
      hint: "give a run folder that vf eval (or Python verifiers) wrote",
    });
  }
  const out: { trace: Trace; env: string }[] = [];
  for (const line of readLines(path)) {
    if (!line.terminated || !line.text.trim()) continue;
    let episode: { env?: { id?: string }; traces?: Trace[] };
    try {
      episode = JSON.parse(line.text);
    } catch {
      continue;
    }
    for (const trace of episode.traces ?? []) out.push({ trace, env: episode.env?.id ?? "" });
  }
  return out;
}

function stats(values: number[]): { mean: number | null; std: number | null } {
  if (!values.length) return { mean: null, std: null };
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length;
  return { mean, std: Math.sqrt(variance) };
}

/** Re-scores the saved traces of `options.source` into `options.outDir`. */
export async function runReplay(
  loaded: LoadedConfig,
  options: RunReplayOptions,
): Promise<ReplayResult> {
  const { config } = loaded;
  const { signal, outDir } = options;
  let sourced = readSourceTraces(options.source);
  if (options.numTraces !== null) sourced = sourced.slice(0, options.numTraces);
  const inputs = await checkInputs(
    { ...loaded, config: { ...config, resume: false, clean: false, num_tasks: 1 } },
    { runDir: null, cwd: options.cwd },
  );
  mkdirSync(join(outDir, "logs"), { recursive: true });
  const log = fileLogger(join(outDir, "logs", "replay.log"));
  const runLog = openRunLog(config, { runDir: null, err: options.err });
  const services = await startServices(loaded, inputs, outDir, runLog);
  const writer = new TracesWriter(join(outDir, "traces.jsonl"));
  // as Python's offline Task.score: the signals that need a runtime are not run (nor seeded)
  const all = services.plan.scoring;
  const skippedSignals = [...all.metrics, ...all.rewards].filter((h) => h.needsRuntime)
    .map((h) => h.name);
  const scoring = {
    ...all,
    metrics: all.metrics.filter((h) => !h.needsRuntime),
    rewards: all.rewards.filter((h) => !h.needsRuntime),
  };
  if (skippedSignals.length) {
    log("info", `score: no runtime — skipped runtime-dependent signals: ${skippedSignals}`);
  }
  const work = sourced.flatMap((s) =>
    Array.from(
      { length: options.numRescores },
      () => ({ trace: structuredClone(s.trace), env: s.env, from: s.trace }),
    )
  );
  log(
    "info",
    `replay: re-scoring ${sourced.length} trace(s) x${options.numRescores} from ${options.source} -> ${outDir}`,
  );
  const tasks = new Map<string, TaskVariance>();
  for (const s of sourced) {
    const key = s.trace.task.key;
    const t = tasks.get(key) ??
      {
        key,
        idx: s.trace.task.data.idx ?? null,
        rewards: [],
        mean: null,
        std: null,
        source_rewards: [],
      };
    t.source_rewards.push(traceReward(s.trace));
    tasks.set(key, t);
  }
  const pool = newPoolStats();
  const started = Date.now();
  let done = 0, scored = 0, skipped = 0, errored = 0, rewardSum = 0;
  const errors = new Map<string, { type: string; count: number; last: string }>();
  const snapshot = (): ProgressSnapshot => ({
    done,
    total: work.length,
    kept: 0,
    inFlight: pool.inFlight,
    elapsedS: (Date.now() - started) / 1000,
    reward: { mean: scored ? rewardSum / scored : null, mean_all: null },
    erroredTraces: 0,
    erroredEpisodes: errored,
    errors: [...errors.values()],
  });
  const display = options.display?.({
    run: {
      envId: config.env.taskset.id,
      harness: "no",
      runtime: "no",
      model: config.model,
      baseUrl: config.client.base_url ?? "",
      tasks: tasks.size,
      rollouts: options.numRescores,
      maxConcurrent: config.max_concurrent,
      kept: 0,
      owed: work.length,
      runDir: outDir,
    },
    snapshot,
  }) ?? null;
  runLog.setDisplay(display);
  display?.start();
  let failure: unknown = null;
  try {
    await runPool<(typeof work)[number], Trace | null>({
      source: (async function* () {
        yield* work;
      })(),
      concurrency: Math.max(1, Math.min(config.max_concurrent, work.length)),
      signal,
      stats: pool,
      run: async ({ trace, env }) => {
        // a rollout that errored has no complete transcript to score: kept as it was
        if (trace.stop_condition === "error" || !trace.ok) {
          skipped++;
          return writeTrace(trace, env);
        }
        delete trace.info.judge;
        trace.rewards = {};
        trace.metrics = {};
        trace.extra_usage = [];
        await scoreTrace(trace, {
          task: trace.task.data as never,
          trace,
          runtime: null,
          config: inputs.tasksetConfig,
          signal,
        }, scoring);
        if (signal.aborted) return null;
        trace.ok = trace.errors.length === 0;
        if (!trace.ok) {
          errored++;
          for (const e of trace.errors) {
            const c = errors.get(e.type) ?? { type: e.type, count: 0, last: "" };
            c.count++;
            c.last = e.message;
            errors.set(e.type, c);
          }
        }
        scored++;
        const reward = traceReward(trace);
        rewardSum += reward;
        tasks.get(trace.task.key)?.rewards.push(reward);
        return writeTrace(trace, env);
      },
      onResult: (trace) => {
        if (trace === null) return;
        done++;
        log("info", `idx=${String(trace.task.data.idx)} reward=${traceReward(trace)}`);
        display?.update();
      },
    });
  } catch (err) {
    failure = err;
  }
  try {
    writer.close();
  } catch (err) {
    failure ??= err;
  }
  await services.close();
  display?.stop();
  runLog.setDisplay(null);
  for (const t of tasks.values()) Object.assign(t, stats(t.rewards));
  const summary = {
    source: options.source,
    traces: sourced.length,
    rescores: options.numRescores,
    scored,
    skipped,
    errored,
    skipped_signals: skippedSignals,
    tasks: [...tasks.values()],
  };
  writeOutputAtomic(join(outDir, "summary.json"), sortedJson(summary) + "\n");
  log("info", `replay: done in ${((Date.now() - started) / 1000).toFixed(1)}s -> ${outDir}`);
  log.close();
  if (failure !== null) throw failure;
  return { summary, cancelled: signal.aborted };

  function writeTrace(trace: Trace, env: string): Trace {
    // one single-trace episode per result, as Python's append_trace writes it
    writer.append({
      id: randomUUID().replaceAll("-", ""),
      env: { id: env },
      task: trace.task,
      ok: trace.ok,
      errors: [],
      traces: [trace],
    });
    return trace;
  }
}
