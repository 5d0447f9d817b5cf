/**
 * One episode: one task through the run's env plugin (`env.id`, `single-agent` by
 * default), whose `run` starts the rollouts and whose `finalize` judges across them,
 * under the env's episode timeout (`env.timeout.episode`), finalize timeout
 * (`env.timeout.finalize`) and whole-episode retries (`env.retries`). A failure of the
 * env itself (a throw outside the rollouts) is an `EnvError` in the episode's `errors`,
 * a deadline a `TimeoutError` (as `Env.run_episode`, verifiers/v1/env.py@a60a606: the
 * traces completed before it are kept, those in flight are not); an episode never throws.
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
import {
  type EnvAgent,
  type EnvAgents,
  envClassName,
  type EnvConfig,
  type EnvInteraction,
  type EnvPlugin,
  type EnvRunOptions,
} from "../../kit/env_contract.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import { traceTask } from "../rollout/new_trace.ts";
import { openInteraction } from "../rollout/interaction.ts";
import type { Episode, Trace, TraceTask } from "../../kit/trace/types.ts";
import { sleepUnlessAborted } from "../../kit/util/sleep.ts";

/** What every episode of a run shares. */
export interface EpisodeSettings {
  /** Every role's rollout plan by name, in the env's order (the first is `env.agent`'s). */
  plans: Record<string, RolloutPlan>;
  env: { id: string; name: string };
  /** The env plugin that plays each episode, and its resolved config (`[env]`). */
  envPlugin: EnvPlugin;
  envConfig: EnvConfig;
  /** `env.timeout.finalize` in seconds (null = none). */
  finalizeTimeoutS: number | null;
  run: Episode["run"];
  /** `env.timeout.episode` in seconds (null = none). */
  timeoutS: number | null;
  /** `env.retries`. */
  retries: RetryPolicy;
  /** How long a cancelled rollout may take to wind down (teardown) before it is left. */
  graceMs: number;
  log(message: string): void;
}

const BARE = new WeakMap<RolloutPlan, RolloutPlan>();

/** A plan for a task of the env's own: none of the taskset's hooks, stops or scoring. */
function barePlan(plan: RolloutPlan): RolloutPlan {
  let bare = BARE.get(plan);
  if (!bare) {
    const { setup: _s, finalize: _f, solution: _o, ...taskset } = plan.taskset;
    bare = {
      ...plan,
      taskset: { ...taskset, rewards: {}, metrics: {}, stops: {} } as RolloutPlan["taskset"],
      stops: [],
      scoring: { rewards: [], metrics: [], judges: [] },
    };
    BARE.set(plan, bare);
  }
  return bare;
}

function envError(message: string): TraceErrorRecord {
  return traceErrorRecord("EnvError", message);
}

/** A hook's deadline error, worded as Python's `Env.run_episode` words it. */
function hookTimeoutError(hook: string, seconds: number, flag: string): TraceErrorRecord {
  return traceErrorRecord("TimeoutError", `${hook} exceeded its ${seconds}s deadline (${flag})`);
}

/** A throw of an env hook as the episode's `EnvError`, naming the hook as Python's boundary. */
function hookError(hook: string, err: unknown): TraceErrorRecord {
  const rec = toTraceError(err, "EnvError");
  rec.type = "EnvError";
  rec.message = `${hook}: ${err instanceof Error ? err.name : "Error"}: ${rec.message}`;
  return rec;
}

/** Runs `finalize` (when the env has one) under `env.timeout.finalize`; resolves with its error. */
async function finalizeEpisode(
  s: EpisodeSettings,
  task: TaskData,
  traces: Trace[],
  signal: AbortSignal,
): Promise<TraceErrorRecord | null> {
  const finalize = s.envPlugin.finalize;
  if (!finalize) return null;
  const hook = `${envClassName(s.envPlugin)}.finalize()`;
  const ctrl = new AbortController();
  const stopForwarding = onAbort(signal, (reason) => ctrl.abort(reason));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"expired">((resolve) => {
    if (s.finalizeTimeoutS !== null) {
      timer = setTimeout(() => resolve("expired"), s.finalizeTimeoutS * 1000);
    }
  });
  try {
    const work = finalize.call(s.envPlugin, {
      task,
      traces,
      config: s.envConfig,
      signal: ctrl.signal,
    });
    work.catch(() => {});
    if (await Promise.race([work, expired]) !== "expired") return null;
    ctrl.abort(new Error(`finalize timed out after ${s.finalizeTimeoutS}s`));
    return hookTimeoutError(hook, s.finalizeTimeoutS!, "--env.timeout.finalize");
  } catch (err) {
    return hookError(hook, err);
  } finally {
    clearTimeout(timer);
    stopForwarding();
  }
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
  const run = `${envClassName(s.envPlugin)}.run()`;
  // Each agent run joins the episode when it finishes (completion order); once the
  // episode deadline passed, a run it cut short is the one in flight and is left out.
  let cutShort = false;
  const taskFor = (plan: RolloutPlan, options: EnvRunOptions) => {
    if (options.task) {
      return { plan: barePlan(plan), task: options.task, id: traceTask("Task", options.task) };
    }
    if (!options.override) return { plan, task, id: identity };
    const changed = { ...task, ...options.override };
    return { plan, task: changed, id: traceTask(identity.type, changed) };
  };
  const join = (trace: Trace, options: EnvRunOptions): Trace => {
    if (options.trainable === false) trace.agent.trainable = false;
    if (trace.ok || !timedOut) episode.traces.push(trace);
    else cutShort = true;
    return trace;
  };
  const seat = (plan: RolloutPlan): EnvAgent => ({
    run: async (options: EnvRunOptions = {}): Promise<Trace> => {
      const p = taskFor(plan, options);
      return join(await runRollout(p.plan, p.task, p.id, rolloutSignal), options);
    },
    interaction: async (options: EnvRunOptions = {}): Promise<EnvInteraction> => {
      const p = taskFor(plan, options);
      const live = await openInteraction(p.plan, p.task, p.id, rolloutSignal);
      return { turn: (m) => live.turn(m), close: async () => join(await live.close(), options) };
    },
  });
  const seats = Object.fromEntries(Object.entries(s.plans).map(([role, p]) => [role, seat(p)]));
  const agents: EnvAgents = { ...seats, agent: seats.agent ?? Object.values(seats)[0]! };
  const work = s.envPlugin.run.call(s.envPlugin, {
    task,
    agents,
    config: s.envConfig,
    signal: rolloutSignal,
  });
  work.catch(() => {});
  let played = false;
  try {
    const result = await Promise.race([work, gaveUp]);
    if (timedOut && (cutShort || result === "gave-up")) {
      episode.errors.push(hookTimeoutError(run, s.timeoutS!, "--env.timeout.episode"));
    } else if (result === "gave-up") {
      episode.errors.push(
        envError(`the rollout did not wind down within ${s.graceMs / 1000}s of being cancelled`),
      );
    } else if (episode.traces.length === 0) {
      episode.errors.push(
        envError(
          `${run}: ValueError: ${run} ran no agent — every episode must carry at least one run`,
        ),
      );
    } else played = true;
  } catch (err) {
    episode.errors.push(
      timedOut ? hookTimeoutError(run, s.timeoutS!, "--env.timeout.episode") : hookError(run, err),
    );
  } finally {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    stopForwarding?.();
    disarm?.();
  }
  if (played) {
    const failed = await finalizeEpisode(s, task, episode.traces, signal);
    if (failed) episode.errors.push(failed);
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
