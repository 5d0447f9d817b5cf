/**
 * Running an evaluation: every selected task × `num_rollouts`, with at most
 * `max_concurrent` episodes in flight.
 *
 * Streaming: tasks are pulled lazily from the taskset view, each finished episode is
 * appended to `traces.jsonl` (whole lines, a turn's episodes in one write) and released,
 * and the summary is accumulated in constant memory, so the runner's own state does not
 * grow with the run.
 * The total (for progress and ETA) comes from a counting pass that keeps nothing: none for
 * an infinite taskset (total = `num_tasks`), one pass stopped at `num_tasks` otherwise;
 * a resume instead reads the selected tasks' keys (one counter per task key) to know
 * what is owed (see `resume.ts`).
 *
 * At the end — normal, error or signal — every runtime not yet stopped is stopped with
 * confirmation; those that cannot be confirmed are named in `summary.json`.
 *
 * This is the engine only: what the user sees (live display, messages) and how the run is
 * stopped (an `AbortSignal`) are injected; the CLI's signals, display, colours, summary
 * printing and exit codes live in `lib/cli/eval_run.ts`, the scripting entry point in
 * `lib/script/start_eval.ts`. With `runDir: null` nothing is written anywhere (in-memory
 * runs). The steps, in order: {@link checkInputs}, {@link openRunLog},
 * {@link planOwed}, {@link startServices}, {@link runEpisodes}, {@link finishRun}.
 *
 * @module
 */
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { EvalConfig } from "../config/eval_config.ts";
import type { LoadedConfig } from "../config/load_config.ts";
import type { TasksetPlugin } from "../../kit/contract.ts";
import { taskTypeName, traceTask } from "../rollout/new_trace.ts";
import { taskHash } from "../../kit/tasks/hash.ts";
import type { TasksetView } from "../../kit/taskset_view.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { Episode, TraceTask } from "../../kit/trace/types.ts";
import { writeEvalJson } from "./config_dump.ts";
import type { DisplayInit, LiveDisplay, ProgressSnapshot } from "./progress.ts";
import { type EpisodeSettings, runEpisode } from "./episode.ts";
import { nothingToResume, planResume } from "./resume.ts";
import { type CheckedInputs, checkInputs, emptySelection } from "./run_inputs.ts";
import { openRunLog, type RunLog } from "./run_log.ts";
import { type RunServices, startServices } from "./run_services.ts";
import { type RunState, summaryOf, writeSummary } from "./run_state.ts";
import { newPoolStats, type PoolStats, runPool } from "./scheduler.ts";
import { rewardText, type RunSummary, SummaryAccumulator } from "./summary.ts";
import { TracesWriter } from "./traces_file.ts";
import { parseShard, shardOwed, shardQuota } from "./shard.ts";

export type { DisplayInit, RunHeading } from "./progress.ts";

/** Live counters of a run (see {@link RunEvalOptions.onStats}). */
export interface RunStats {
  /** Episodes (task × rollout slots) pulled from the source so far. */
  pulled: number;
  /** Episodes running now: each holds its task and trace until it is written. */
  liveEpisodes: number;
  /** The most episodes ever live at once. */
  maxLiveEpisodes: number;
  /** Episodes written to traces.jsonl by this launch. */
  written: number;
  /** Runtimes created and not yet known to be stopped. */
  liveRuntimes: number;
}

/** One episode to run: a task and its identity (shared by the task's rollouts). */
interface Slot {
  task: TaskData;
  identity: TraceTask;
}

/** Options of {@link runEval}. */
export interface RunEvalOptions {
  /** The run directory; `null` writes nothing anywhere (an in-memory run, no resume). */
  runDir: string | null;
  /** Base of relative paths in the config (output_dir, system_prompt file). */
  cwd: string;
  /** Messages for the user (warnings, the end-of-run notes), one line each (stderr). */
  err?: (line: string) => void;
  /** Data output (stdout in the CLI). */
  out?: (line: string) => void;
  /** Cancels the run: no new episode starts, episodes in flight are cancelled. */
  signal?: AbortSignal | undefined;
  /** Makes the live display. @default none */
  display?: (init: DisplayInit) => LiveDisplay;
  /** Called after each episode is written, with live counters. */
  onStats?: (stats: RunStats) => void;
  /** Called with each episode as it completes, after it is written and counted. */
  onEpisode?: (episode: Episode) => void;
  /** How long a cancelled rollout may take to wind down before it is left. @default 30000 */
  graceMs?: number;
}

/** What a finished run produced. */
export interface RunResult {
  summary: RunSummary;
  /** The run directory, `null` for an in-memory run. */
  runDir: string | null;
  cancelled: boolean;
  /** Set when a resume found nothing owed (the run was not started again). */
  nothingToResume?: string;
}

const NEVER = new AbortController().signal;

/**
 * Step 3: what is owed: everything (fresh, and `configs/eval.json` is written) or what
 * the saved lines do not cover (resume: they are counted into the summary). Returns the
 * message when a resume owes nothing.
 */
async function planOwed(
  config: EvalConfig,
  runDir: string | null,
  inputs: CheckedInputs,
  state: RunState,
  runLog: RunLog,
): Promise<string | null> {
  const R = config.num_rollouts;
  const shard = config.shard === null ? null : parseShard(config.shard, () => undefined);
  if (config.resume && runDir !== null) {
    const quota = shard ? (p: number) => shardQuota(p, R, shard) : R;
    const plan = await planResume(runDir, inputs.view, quota, (ep) => state.acc.add(ep, true));
    if (plan.tasks === 0) throw emptySelection(config);
    state.expected = plan.slots;
    state.owed = plan.owed;
    const d = plan.dropped;
    runLog.log(
      `resume (attempt ${runLog.attempt}): kept ${plan.kept}, owed ${plan.totalOwed} of ${state.expected}; ` +
        `dropped ${d.errored} errored, ${d.malformed} malformed/torn, ${d.invalid} invalid, ` +
        `${d.foreign} foreign, ${d.surplus} surplus lines` +
        (plan.rewritten ? "; traces.jsonl rewritten" : ""),
    );
    return plan.totalOwed === 0 ? nothingToResume(runDir, plan.tasks, R, plan.slots) : null;
  }
  if (shard) {
    const dealt = await shardOwed(inputs.view, R, shard);
    state.owed = dealt.owed;
    state.expected = dealt.slots;
  } else state.expected = inputs.selected! * R;
  if (runDir !== null) writeEvalJson(runDir, config);
  return null;
}

/** Every owed (task, rollout) slot, tasks pulled one at a time; R slots share one identity. */
async function* slotsOf(
  view: TasksetView,
  taskset: TasksetPlugin,
  rollouts: number,
  owed: Map<string, number> | null,
): AsyncGenerator<Slot> {
  const type = taskTypeName(taskset);
  for await (const task of view) {
    let n = rollouts;
    if (owed) {
      const key = taskHash(task);
      const left = owed.get(key) ?? 0;
      n = Math.min(rollouts, left);
      if (left - n > 0) owed.set(key, left - n);
      else owed.delete(key);
    }
    if (n === 0) continue;
    const identity = traceTask(type, task, taskset.key?.(task));
    for (let i = 0; i < n; i++) yield { task, identity };
  }
}

/** The warning of a run whose engine lets it collect nothing (lib/run/heap_trim.ts). */
export const HEAP_UNCOLLECTABLE =
  "this run cannot collect its heap as it goes, so its memory grows with the run: start Deno " +
  "with --v8-flags=--expose-gc,--max-semi-space-size=16 (as `deno task vf` and `npx vf` do)";

/** What one launch's pool of episodes needs. */
interface EpisodeRun {
  settings: EpisodeSettings;
  services: RunServices;
  state: RunState;
  runLog: RunLog;
  writer: TracesWriter | null;
  pool: PoolStats;
  display: LiveDisplay | null;
  signal: AbortSignal;
}

/**
 * Step 5: runs the owed slots with at most `max_concurrent` in flight; each finished
 * episode is written, counted, shown and handed to the callbacks. Returns how many
 * episodes the signal cancelled in flight (owed again on resume).
 */
async function runEpisodes(
  config: EvalConfig,
  inputs: CheckedInputs,
  run: EpisodeRun,
  options: RunEvalOptions,
): Promise<number> {
  const { state, writer, pool, signal } = run;
  const stats: RunStats = {
    pulled: 0,
    liveEpisodes: 0,
    maxLiveEpisodes: 0,
    written: 0,
    liveRuntimes: 0,
  };
  let dropped = 0;
  await runPool<Slot, Episode>({
    source: slotsOf(inputs.view, inputs.taskset, config.num_rollouts, state.owed),
    concurrency: Math.min(config.max_concurrent, Math.max(1, state.expected - state.acc.kept)),
    signal,
    stats: pool,
    run: (slot) => runEpisode(run.settings, slot.task, slot.identity, signal),
    onHeapUncollectable: () => run.runLog.warn(HEAP_UNCOLLECTABLE),
    onResult: (episode) => {
      if (signal.aborted && !episode.ok) {
        dropped++; // cancelled mid-way: owed again on resume
        return;
      }
      if (writer) writer.append(episode, () => counted(episode));
      else counted(episode);
    },
  });
  return dropped;

  /** An episode in traces.jsonl (or finished, in a run that writes nothing): counted and shown. */
  function counted(episode: Episode): void {
    state.acc.add(episode);
    if (!episode.ok) {
      const types = new Set(episode.errors.map((e) => e.type));
      for (const t of episode.traces) for (const e of t.errors) types.add(e.type);
      run.runLog.logFile(
        "info",
        `episode ${episode.id} (task ${episode.task.key}) errored: ${[...types]}`,
      );
    }
    run.services.tracker.prune();
    run.display?.update();
    if (options.onStats) {
      stats.pulled = pool.pulled;
      stats.liveEpisodes = pool.inFlight;
      stats.maxLiveEpisodes = pool.maxInFlight;
      stats.written = writer?.lines ?? state.acc.episodes - state.acc.kept;
      stats.liveRuntimes = run.services.tracker.size;
      options.onStats(stats);
    }
    options.onEpisode?.(episode);
  }
}

/**
 * Step 6, after the pool ended however it ended: every runtime stopped with confirmation
 * (those unconfirmed named), the traces closed, the services stopped, the summary written.
 * Throws the first failure (the pool's, else the summary write's).
 */
async function finishRun(
  loaded: LoadedConfig,
  runDir: string | null,
  run: EpisodeRun,
  outcome: { failure: unknown; dropped: number },
): Promise<RunResult> {
  const { state, runLog } = run;
  const { logFile } = runLog;
  let failure = outcome.failure;
  try {
    state.unconfirmed = await run.services.tracker.sweep();
  } finally {
    try {
      run.writer?.close(); // the last lines are written (and counted) here
    } catch (err) {
      failure ??= err;
    }
    await run.services.close();
  }
  const cancelled = run.signal.aborted;
  for (const u of state.unconfirmed) {
    // every one is named (not deduplicated like other warnings): someone must clean up
    const m = `sandbox not confirmed stopped: ${u.type} ${u.id ?? "(no id)"}: ${u.error}`;
    logFile("warn", m);
    runLog.say(`warning: ${m}`);
  }
  const status = cancelled ? "cancelled" : "completed";
  const summary = summaryOf(loaded, runDir, state, runLog.attempt, status);
  try {
    writeSummary(runDir, summary);
  } catch (err) {
    // the first failure (e.g. the traces write that hit a full disk) is the one reported
    if (failure === null) failure = err;
    else logFile("error", `summary not written: ${(err as Error).message}`);
  }
  run.display?.stop();
  runLog.setDisplay(null);
  const { acc, expected } = state;
  if (cancelled) {
    runLog.log(
      `cancelled: ${acc.episodes}/${expected} episodes saved` +
        (outcome.dropped ? `, ${outcome.dropped} cancelled in flight (owed on resume)` : ""),
    );
  }
  if (failure !== null) {
    logFile("error", `run failed: ${failure instanceof Error ? failure.message : failure}`);
    logFile.close();
    throw failure;
  }
  runLog.log(`done: ${acc.episodes}/${expected} episodes, reward ${rewardText(summary)}`);
  logFile.close();
  return { summary, runDir, cancelled };
}

/** Runs a loaded config to completion (or cancellation). */
export async function runEval(loaded: LoadedConfig, options: RunEvalOptions): Promise<RunResult> {
  const config = loaded.config;
  const state: RunState = {
    started: Date.now(),
    acc: new SummaryAccumulator(),
    expected: 0,
    owed: null,
    unconfirmed: [],
  };
  const signal = options.signal ?? NEVER;
  const runDir = options.runDir;
  const R = config.num_rollouts;

  const inputs = await checkInputs(loaded, options);
  const runLog = openRunLog(config, options);
  const { logFile } = runLog;
  let services: RunServices;
  try {
    const nothingOwed = await planOwed(config, runDir, inputs, state, runLog);
    if (nothingOwed !== null) {
      runLog.log(nothingOwed);
      const summary = summaryOf(loaded, runDir, state, runLog.attempt, "completed");
      writeSummary(runDir, summary);
      logFile.close();
      return { summary, runDir, cancelled: false, nothingToResume: nothingOwed };
    }
    services = await startServices(loaded, inputs, runDir, runLog);
  } catch (err) {
    logFile("error", `run failed before it started: ${(err as Error).message}`);
    logFile.close();
    throw err;
  }

  const envId = config.env.id ? `${config.env.id}+${config.env.taskset.id}` : config.env.taskset.id;
  const settings: EpisodeSettings = {
    plans: services.plans,
    env: { id: envId, name: envId },
    envPlugin: loaded.plugins.env,
    envConfig: config.env,
    finalizeTimeoutS: config.env.timeout.finalize,
    run: { type: "eval", id: randomUUID().replaceAll("-", ""), name: config.run.name ?? "" },
    timeoutS: config.env.timeout.episode,
    retries: config.env.retries,
    graceMs: options.graceMs ?? 30_000,
    log: runLog.log,
  };
  const pool = newPoolStats();
  const { acc } = state;
  const snapshot = (): ProgressSnapshot => ({
    done: acc.episodes,
    total: state.expected,
    kept: acc.kept,
    inFlight: pool.inFlight,
    elapsedS: (Date.now() - state.started) / 1000,
    reward: { mean: acc.meanReward, mean_all: acc.meanRewardAll },
    erroredTraces: acc.erroredTraces,
    erroredEpisodes: acc.erroredEpisodes,
    errors: acc.errorTypes(),
  });
  const display = options.display?.({
    run: {
      envId,
      harness: config.env.agent.harness.id,
      runtime: config.env.agent.runtime.type,
      model: config.model,
      baseUrl: config.client.base_url ?? "",
      // a shard's slots are not whole tasks: shown as one rollout each
      tasks: config.shard === null ? state.expected / R : state.expected,
      rollouts: config.shard === null ? R : 1,
      maxConcurrent: config.max_concurrent,
      kept: acc.kept,
      owed: state.expected - acc.kept,
      runDir,
    },
    snapshot,
  }) ?? null;
  runLog.setDisplay(display);
  runLog.log(
    `run ${settings.run.name} (attempt ${runLog.attempt}): ${state.expected} episodes ` +
      `(${
        config.shard === null ? `${state.expected / R} tasks × ${R}` : `shard ${config.shard}`
      }), ${state.expected - acc.kept} to run`,
  );
  display?.start();

  const writer = runDir !== null ? new TracesWriter(join(runDir, "traces.jsonl")) : null;
  const run: EpisodeRun = { settings, services, state, runLog, writer, pool, display, signal };
  let failure: unknown = null;
  let dropped = 0;
  try {
    dropped = await runEpisodes(config, inputs, run, options);
  } catch (err) {
    failure = err;
  }
  return await finishRun(loaded, runDir, run, { failure, dropped });
}
