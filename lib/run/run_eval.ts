/**
 * Running an evaluation: every selected task × `num_rollouts`, with at most
 * `max_concurrent` episodes in flight.
 *
 * Streaming: tasks are pulled lazily from the taskset view, each finished episode is
 * appended to `traces.jsonl` (one write per line) and released, and the summary is
 * accumulated in constant memory, so the runner's own state does not grow with the run.
 * The total (for progress and ETA) comes from a counting pass that keeps nothing: none for
 * an infinite taskset (total = `num_tasks`), one pass stopped at `num_tasks` otherwise;
 * a resume instead reads the selected tasks' keys (one counter per task key) to know
 * what is owed (see `resume.ts`).
 *
 * At the end — normal, error or signal — every runtime not yet stopped is stopped with
 * confirmation; those that cannot be confirmed are named in `summary.json`.
 *
 * This is the engine only: what the user sees (live display, messages) and how the run is
 * stopped (an `AbortSignal`) are injected; the CLI's signals, summary printing and exit
 * codes live in `lib/cli/eval_run.ts`, the scripting entry point in `lib/script/evaluate.ts`.
 * With `runDir: null` nothing is written anywhere (in-memory runs).
 *
 * @module
 */
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import type { LoadedConfig } from "../config/load_config.ts";
import { InputError } from "../../kit/errors.ts";
import { startInterceptionServer } from "../model/interception_server.ts";
import { inProcessOracle } from "../model/oracle.ts";
import { createProviderClient, stallMs } from "../model/provider_client.ts";
import { taskTypeName, traceTask } from "../rollout/new_trace.ts";
import { taskHash } from "../../kit/tasks/hash.ts";
import { TasksetView } from "../../kit/tasks/taskset_view.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { Episode, TraceTask } from "../../kit/trace/types.ts";
import { writeEvalJson, writeFileAtomic } from "./config_dump.ts";
import type { LiveDisplay, ProgressSnapshot } from "./display.ts";
import { type EpisodeSettings, runEpisode } from "./episode.ts";
import { buildRolloutPlan } from "./plan.ts";
import { type FileLogger, fileLogger, newLogAttempt, prepareRunDir } from "./run_dir.ts";
import { checkResumeConfig, nothingToResume, planResume } from "./resume.ts";
import { RuntimeTracker } from "./runtime_tracker.ts";
import { newPoolStats, runPool } from "./scheduler.ts";
import { checkBounded, countSelected, selectTasks } from "./select.ts";
import {
  rewardText,
  type RunSummary,
  SummaryAccumulator,
  type UnconfirmedSandbox,
} from "./summary.ts";
import { TracesWriter } from "./traces_file.ts";
import { removeOrphanWorkdirs } from "../../kit/runtime/workdirs.ts";
import { addClientSecrets, addHostSecrets, redact } from "../../kit/secrets.ts";
import { getAllEnv } from "../../kit/_runtime/env.ts";
import { MAX_PROMPT_FILE_BYTES, readTextFileBounded } from "../../kit/util/read_text.ts";

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

/** What a display is made from. */
export interface DisplayInit {
  header: string[];
  snapshot(): ProgressSnapshot;
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
  signal?: AbortSignal;
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

function readSystemPrompt(path: string, cwd: string): string {
  return readTextFileBounded(resolve(cwd, path), {
    what: "env.taskset.system_prompt file",
    maxBytes: MAX_PROMPT_FILE_BYTES,
    unreadableCode: "system_prompt_unreadable",
    hint: "give a path to a readable text file (relative to the working directory)",
  });
}

/** A resume first removes the local work directories its crashed launch left behind. */
function removeCrashedWorkdirs(config: LoadedConfig["config"]): void {
  const root: unknown = Reflect.get(config.env.agent.runtime, "workdir_root");
  removeOrphanWorkdirs(typeof root === "string" ? root : undefined);
  if (typeof root === "string") removeOrphanWorkdirs();
}

/** The error of a run whose taskset and selection yield no task at all. */
function emptySelection(config: LoadedConfig["config"]): InputError {
  const n = config.num_tasks;
  return new InputError(
    "no_tasks",
    `Nothing to run: taskset "${config.env.taskset.id}" yields no tasks` +
      (n !== null ? ` (with -n ${n})` : ""),
    { hint: "check the taskset's config (e.g. its file) and the selection flags" },
  );
}

/** A base URL as shown: without credentials, query or fragment. */
function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = "";
    u.password = "";
    u.search = "";
    u.hash = "";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(invalid URL)";
  }
}

const NEVER = new AbortController().signal;

/** Registers the run's secrets (host credentials, the run's and the judges' clients). */
function registerRunSecrets(config: LoadedConfig["config"]): void {
  const env = getAllEnv();
  addHostSecrets(env);
  addClientSecrets(config.client, env);
  for (const judge of config.env.taskset.task.judges) addClientSecrets(judge, env);
}

/** `1 task`, `3 tasks`. */
const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/** A logger that keeps nothing (in-memory runs). */
function nullLogger(): FileLogger {
  const log = (() => {}) as unknown as FileLogger;
  log.close = () => {};
  return log;
}

/** Runs a loaded config to completion (or cancellation). */
export async function runEval(loaded: LoadedConfig, options: RunEvalOptions): Promise<RunResult> {
  const config = loaded.config;
  const started = Date.now();
  const signal = options.signal ?? NEVER;
  const runDir = options.runDir;
  const R = config.num_rollouts;
  const { taskset } = loaded.plugins;
  if (!taskset) throw new InputError("taskset_missing", "Cannot run: no taskset");

  registerRunSecrets(config);
  // 1. input checks before anything touches the disk
  const tasksetConfig = { ...config.env.taskset };
  if (config.env.taskset.system_prompt) {
    tasksetConfig.system_prompt = readSystemPrompt(config.env.taskset.system_prompt, options.cwd);
  }
  const all = new TasksetView(taskset, tasksetConfig);
  checkBounded(all, config);
  // an empty selection is refused before the run directory exists
  const selected = config.resume ? null : await countSelected(all, config);
  if (selected === 0) throw emptySelection(config);
  if (runDir === null && config.resume) {
    throw new InputError("resume_needs_dir", "Cannot resume an in-memory run", {
      hint: "resume names a run directory; give the run an output directory",
    });
  }
  if (runDir !== null) {
    const outputDir = resolve(options.cwd, config.output_dir);
    prepareRunDir(runDir, outputDir, { clean: config.clean, resume: config.resume });
    if (config.resume) {
      checkResumeConfig(runDir, config);
      removeCrashedWorkdirs(config);
    }
  }
  const view = selectTasks(all, config);

  const { dir: logDir, attempt } = runDir !== null
    ? newLogAttempt(runDir)
    : { dir: null, attempt: 1 };
  const logFile = logDir !== null ? fileLogger(join(logDir, "eval.log")) : nullLogger();
  let display: LiveDisplay | null = null;
  const say = (line: string) => (display ? display.log(line) : options.err?.(line));
  const log = (m: string) => {
    logFile("info", m);
    if (config.verbose) say(m);
  };
  // Warnings go to the log; the terminal sees each distinct one once (a warning per
  // rollout would drown the display), and per-call model failures only with -v (the
  // display and the summary count them as errors).
  const shown = new Set<string>();
  const warn = (m: string) => {
    logFile("warn", m);
    if (shown.has(m) || shown.size > 50) return;
    shown.add(m);
    say(
      shown.size > 50
        ? `warning: more warnings${logDir !== null ? ` in ${join(logDir, "eval.log")}` : ""}`
        : `warning: ${m}`,
    );
  };

  const acc = new SummaryAccumulator();
  let unconfirmed: UnconfirmedSandbox[] = [];
  const summaryOf = (status: RunSummary["status"]): RunSummary =>
    acc.summary({
      run: { name: config.run.name ?? "", dir: runDir ?? "" },
      model: config.model ?? "",
      taskset: config.env.taskset.id,
      harness: config.env.agent.harness.id,
      runtime: config.env.agent.runtime.type,
      status,
      attempt,
      wall_time_s: (Date.now() - started) / 1000,
      unconfirmed_sandboxes: unconfirmed,
      output_dir: runDir ?? "",
      expected,
      fail_on_error_threshold: config.fail_on_error,
    });
  const writeSummary = (s: RunSummary) => {
    if (runDir !== null) {
      writeFileAtomic(join(runDir, "summary.json"), redact(JSON.stringify(s, null, 2)) + "\n");
    }
  };

  // 2. what is owed: everything (fresh) or what the saved lines do not cover (resume)
  let expected = 0;
  let owed: Map<string, number> | null = null;
  try {
    if (config.resume && runDir !== null) {
      const plan = await planResume(runDir, view, R, (ep) => acc.add(ep, true));
      if (plan.tasks === 0) throw emptySelection(config);
      expected = plan.tasks * R;
      owed = plan.owed;
      const d = plan.dropped;
      log(
        `resume (attempt ${attempt}): kept ${plan.kept}, owed ${plan.totalOwed} of ${expected}; ` +
          `dropped ${d.errored} errored, ${d.malformed} malformed/torn, ${d.invalid} invalid, ` +
          `${d.foreign} foreign, ${d.surplus} surplus lines` +
          (plan.rewritten ? "; traces.jsonl rewritten" : ""),
      );
      if (plan.totalOwed === 0) {
        const message = nothingToResume(runDir, plan.tasks, R);
        log(message);
        const summary = summaryOf("completed");
        writeSummary(summary);
        logFile.close();
        return { summary, runDir, cancelled: false, nothingToResume: message };
      }
    } else {
      expected = selected! * R;
      if (runDir !== null) writeEvalJson(runDir, config);
    }
  } catch (err) {
    logFile("error", `run failed before it started: ${(err as Error).message}`);
    logFile.close();
    throw err;
  }

  // 3. services shared by every rollout
  const tracker = new RuntimeTracker();
  const oracle = config.model === "oracle" ? inProcessOracle() : null;
  const client = oracle ? oracle.client : createProviderClient({
    baseUrl: config.client.base_url!,
    apiKeyVar: config.client.api_key_var,
    headers: config.client.headers,
    stallTimeoutMs: stallMs(config.client.stall_timeout),
  });
  const interception = await startInterceptionServer({
    log: (level, m) => {
      if (level === "debug" && !config.verbose) return;
      logFile(level, m);
      if (config.verbose) say(m);
    },
  });
  let plan: ReturnType<typeof buildRolloutPlan>;
  try {
    plan = buildRolloutPlan({
      ...loaded,
      config: {
        ...config,
        env: { ...config.env, taskset: tasksetConfig as typeof config.env.taskset },
      },
      plugins: {
        ...loaded.plugins,
        runtime: tracker.wrap(loaded.plugins.runtime, { run: runDir, log: warn }),
      },
    }, { client, interception, oracle, log, warn });
    await plan.ready; // a plugged function that cannot load refuses the run before any rollout
  } catch (err) {
    await interception.close();
    await oracle?.close();
    client.close();
    logFile("error", `run failed before it started: ${(err as Error).message}`);
    logFile.close();
    throw err;
  }

  const envId = config.env.id ? `${config.env.id}+${config.env.taskset.id}` : config.env.taskset.id;
  const settings: EpisodeSettings = {
    plan,
    env: { id: envId, name: envId },
    run: { type: "eval", id: randomUUID().replaceAll("-", ""), name: config.run.name ?? "" },
    timeoutS: config.env.timeout.episode,
    retries: config.env.retries,
    graceMs: options.graceMs ?? 30_000,
    log,
  };

  const writer = runDir !== null ? new TracesWriter(join(runDir, "traces.jsonl")) : null;
  const pool = newPoolStats();
  const stats: RunStats = {
    pulled: 0,
    liveEpisodes: 0,
    maxLiveEpisodes: 0,
    written: 0,
    liveRuntimes: 0,
  };
  const snapshot = (): ProgressSnapshot => ({
    done: acc.episodes,
    total: expected,
    kept: acc.kept,
    inFlight: pool.inFlight,
    elapsedS: (Date.now() - started) / 1000,
    reward: { mean: acc.meanReward, mean_all: acc.meanRewardAll },
    erroredTraces: acc.erroredTraces,
    erroredEpisodes: acc.erroredEpisodes,
    errors: acc.errorTypes(),
  });
  const model = config.model === "oracle"
    ? "oracle (reference solutions)"
    : `${config.model} via ${shownUrl(config.client.base_url ?? "")}`;
  const header = [
    `vf eval · ${envId} · ${config.env.agent.harness.id} harness · ${config.env.agent.runtime.type} runtime`,
    `model    ${model}`,
    `run      ${plural(expected / R, "task")} × ${
      plural(R, "rollout")
    } · ≤${config.max_concurrent} in flight` +
    (acc.kept ? ` · resuming: ${acc.kept} kept, ${expected - acc.kept} owed` : ""),
    `output   ${runDir ?? "(in memory)"}`,
  ];
  display = options.display?.({ header, snapshot }) ?? null;
  log(
    `run ${settings.run.name} (attempt ${attempt}): ${expected} episodes ` +
      `(${expected / R} tasks × ${R}), ${expected - acc.kept} to run`,
  );
  display?.start();

  /** Every owed (task, rollout) slot, tasks pulled one at a time; R slots share one identity. */
  async function* slots(): AsyncGenerator<Slot> {
    for await (const task of view) {
      let n = R;
      if (owed) {
        const key = taskHash(task);
        const left = owed.get(key) ?? 0;
        n = Math.min(R, left);
        if (left - n > 0) owed.set(key, left - n);
        else owed.delete(key);
      }
      if (n === 0) continue;
      const identity = traceTask(taskTypeName(taskset!), task, taskset!.key?.(task));
      for (let i = 0; i < n; i++) yield { task, identity };
    }
  }

  let failure: unknown = null;
  let dropped = 0;
  try {
    await runPool<Slot, Episode>({
      source: slots(),
      concurrency: Math.min(config.max_concurrent, Math.max(1, expected - acc.kept)),
      signal,
      stats: pool,
      run: (slot) => runEpisode(settings, slot.task, slot.identity, signal),
      onResult: (episode) => {
        if (signal.aborted && !episode.ok) {
          dropped++; // cancelled mid-way: owed again on resume
          return;
        }
        writer?.append(episode);
        acc.add(episode);
        if (!episode.ok) {
          const types = new Set(episode.errors.map((e) => e.type));
          for (const t of episode.traces) for (const e of t.errors) types.add(e.type);
          logFile(
            "info",
            `episode ${episode.id} (task ${episode.task.key}) errored: ${[...types]}`,
          );
        }
        tracker.prune();
        display?.update();
        if (options.onStats) {
          stats.pulled = pool.pulled;
          stats.liveEpisodes = pool.inFlight;
          stats.maxLiveEpisodes = pool.maxInFlight;
          stats.written = writer?.lines ?? acc.episodes - acc.kept;
          stats.liveRuntimes = tracker.size;
          options.onStats(stats);
        }
        options.onEpisode?.(episode);
      },
    });
  } catch (err) {
    failure = err;
  } finally {
    unconfirmed = await tracker.sweep();
    writer?.close();
    await interception.close();
    await oracle?.close();
    client.close();
  }
  const cancelled = signal.aborted;
  for (const u of unconfirmed) {
    // every one is named (not deduplicated like other warnings): someone must clean up
    const m = `sandbox not confirmed stopped: ${u.type} ${u.id ?? "(no id)"}: ${u.error}`;
    logFile("warn", m);
    say(`warning: ${m}`);
  }
  const summary = summaryOf(cancelled ? "cancelled" : "completed");
  try {
    writeSummary(summary);
  } catch (err) {
    // the first failure (e.g. the traces write that hit a full disk) is the one reported
    if (failure === null) failure = err;
    else logFile("error", `summary not written: ${(err as Error).message}`);
  }
  display?.stop();
  display = null;
  if (cancelled) {
    log(
      `cancelled: ${acc.episodes}/${expected} episodes saved` +
        (dropped ? `, ${dropped} cancelled in flight (owed on resume)` : ""),
    );
  }
  if (failure !== null) {
    logFile("error", `run failed: ${failure instanceof Error ? failure.message : failure}`);
    logFile.close();
    throw failure;
  }
  log(`done: ${acc.episodes}/${expected} episodes, reward ${rewardText(summary)}`);
  logFile.close();
  return { summary, runDir, cancelled };
}
