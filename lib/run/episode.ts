/**
 * One episode: one task through the single-agent env — one rollout — under the env's
 * episode timeout (`env.timeout.episode`) and whole-episode retries (`env.retries`).
 * A failure of the env itself (a throw outside the rollout) is an `EnvError` in the
 * episode's `errors`, the episode deadline a `TimeoutError` (as `Env.run_episode`,
 * verifiers/v1/env.py@a60a606: the traces completed before it are kept, the one in
 * flight is not); an episode never throws.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { toTraceError, type TraceErrorRecord, traceErrorRecord } from "../../kit/errors.ts";
import { onAbort } from "../../kit/util/on_abort.ts";
import {
  retryDelayMs,
  type RetryPolicy,
  type RolloutPlan,
  runRollout,
} from "../rollout/rollout.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { Episode, Trace, TraceTask } from "../../kit/trace/types.ts";
import { sleepUnlessAborted } from "../../kit/util/sleep.ts";

/** What every episode of a run shares. */
export interface EpisodeSettings {
  plan: RolloutPlan;
  env: { id: string; name: string };
  run: Episode["run"];
  /** `env.timeout.episode` in seconds (null = none). */
  timeoutS: number | null;
  /** `env.retries`. */
  retries: RetryPolicy;
  /** How long a cancelled rollout may take to wind down (teardown) before it is left. */
  graceMs: number;
  log(message: string): void;
}

function envError(message: string): TraceErrorRecord {
  return traceErrorRecord("EnvError", message);
}

/** The episode deadline's error, worded as Python's `Env.run_episode` words it. */
function episodeTimeoutError(seconds: number): TraceErrorRecord {
  return traceErrorRecord(
    "TimeoutError",
    `SingleAgentEnv.run() exceeded its ${seconds}s deadline (--env.timeout.episode)`,
  );
}

function errorTypes(ep: Episode): Set<string> {
  const types = new Set(ep.errors.map((e) => e.type));
  for (const t of ep.traces) for (const e of t.errors) types.add(e.type);
  return types;
}

/** True when a failed episode may be retried under `policy` (exclude wins over include). */
function episodeRetryable(ep: Episode, policy: RetryPolicy): boolean {
  const types = errorTypes(ep);
  if (types.size === 0) return false;
  for (const t of types) if (policy.exclude.includes(t)) return false;
  return policy.include.length === 0 || [...types].some((t) => policy.include.includes(t));
}

async function attempt(
  s: EpisodeSettings,
  task: TaskData,
  identity: TraceTask,
  signal: AbortSignal,
): Promise<Episode> {
  const episode: Episode = {
    id: randomUUID().replaceAll("-", ""),
    env: s.env,
    task: identity,
    group: null,
    run: s.run,
    ok: false,
    errors: [],
    traces: [],
  };
  // Without an episode timeout the rollout takes the run's signal as is (no extra
  // controller on the hot path); with one, a controller aborts on either.
  const ctrl = s.timeoutS === null ? null : new AbortController();
  let stopForwarding: (() => void) | undefined;
  if (ctrl) {
    if (signal.aborted) ctrl.abort(signal.reason);
    else stopForwarding = onAbort(signal, (reason) => ctrl.abort(reason));
  }
  const rolloutSignal = ctrl ? ctrl.signal : signal;
  let timedOut = false;
  const timer = ctrl === null ? undefined : setTimeout(() => {
    timedOut = true;
    ctrl.abort(new Error(`episode timed out after ${s.timeoutS}s`));
  }, s.timeoutS! * 1000);
  // Once cancelled, the rollout gets `graceMs` to wind down (tear its runtime down).
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  let disarm: (() => void) | undefined;
  const gaveUp = new Promise<"gave-up">((resolve) => {
    const arm = () => (graceTimer = setTimeout(() => resolve("gave-up"), s.graceMs));
    if (rolloutSignal.aborted) arm();
    else disarm = onAbort(rolloutSignal, arm);
  });
  const work = runRollout(s.plan, task, identity, rolloutSignal);
  work.catch(() => {});
  try {
    const result: Trace | "gave-up" = await Promise.race([work, gaveUp]);
    if (result !== "gave-up" && (result.ok || !timedOut)) episode.traces.push(result);
    else if (timedOut) episode.errors.push(episodeTimeoutError(s.timeoutS!));
    else {
      episode.errors.push(
        envError(`the rollout did not wind down within ${s.graceMs / 1000}s of being cancelled`),
      );
    }
  } catch (err) {
    const rec = toTraceError(err, "EnvError");
    rec.type = "EnvError";
    episode.errors.push(rec);
  } finally {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    stopForwarding?.();
    disarm?.();
  }
  episode.ok = episode.errors.length === 0 && episode.traces.length > 0 &&
    episode.traces.every((t) => t.ok);
  return episode;
}

/**
 * Runs one episode with whole-episode retries: a failed attempt is retried when its error
 * types pass `env.retries` (after a jittered backoff); the final episode lists the errors
 * of the attempts before it, then its own.
 */
export async function runEpisode(
  s: EpisodeSettings,
  task: TaskData,
  identity: TraceTask,
  signal: AbortSignal,
): Promise<Episode> {
  const earlier: TraceErrorRecord[] = [];
  for (let n = 0;; n++) {
    const ep = await attempt(s, task, identity, signal);
    if (
      ep.ok || n >= s.retries.max_retries || signal.aborted || !episodeRetryable(ep, s.retries)
    ) {
      if (earlier.length) ep.errors = [...earlier, ...ep.errors];
      return ep;
    }
    earlier.push(...ep.errors);
    for (const t of ep.traces) earlier.push(...t.errors);
    s.log(
      `episode ${ep.id} (task ${identity.key}) failed (${[...errorTypes(ep)].join(", ")}); ` +
        `retry ${n + 1}/${s.retries.max_retries}`,
    );
    await sleepUnlessAborted(retryDelayMs(n), signal);
  }
}
