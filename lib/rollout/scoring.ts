/**
 * Scoring one trace: expected rewards and metrics are seeded as null, then metrics,
 * rewards and judges run (by priority, then name); a hook returning a mapping records
 * each key. A failing hook is a `TaskError` on the trace and leaves its seed null.
 * `reward = Σ score × weight` over non-null rewards (see `traceReward`).
 *
 * @module
 */
import { TaskError, toTraceError } from "../errors.ts";
import type { JudgeEntry } from "../config/eval_config.ts";
import type {
  HookContext,
  JudgeContext,
  JudgePlugin,
  MetricHook,
  RewardHook,
  ScoreValue,
} from "../plugins/contract.ts";
import type { Trace } from "../trace/types.ts";

/** A reward hook under its key, with config overrides applied. */
export interface NamedReward extends RewardHook {
  name: string;
}

/** A metric hook under its key. */
export interface NamedMetric extends MetricHook {
  name: string;
}

/** A judge with its resolved config entry. */
export interface ConfiguredJudge {
  plugin: JudgePlugin;
  entry: JudgeEntry;
  /** Builds the judge's context (client, recording) for one trace. */
  context(base: HookContext): JudgeContext;
}

/** The reward key of a judge: `name`, else the id. */
export function judgeRewardKey(entry: JudgeEntry): string {
  return entry.name || entry.id;
}

function ordered<T extends { name: string; priority?: number }>(hooks: T[]): T[] {
  return [...hooks].sort((a, b) =>
    (b.priority ?? 0) - (a.priority ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}

function checkScore(name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new TaskError(`${name} returned ${JSON.stringify(value)}, not a finite number`);
  }
  return value;
}

function record(
  name: string,
  value: ScoreValue,
  put: (key: string, score: number) => void,
  drop: (key: string) => void,
): void {
  if (typeof value === "object" && value !== null) {
    drop(name);
    for (const [k, v] of Object.entries(value)) put(k, checkScore(`${name}[${k}]`, v));
  } else put(name, checkScore(name, value));
}

/** What to score with. */
export interface ScoringPlan {
  metrics: NamedMetric[];
  rewards: NamedReward[];
  judges: ConfiguredJudge[];
}

/** Seeds and runs every metric, reward and judge on `trace` (in place). */
export async function scoreTrace(trace: Trace, ctx: HookContext, plan: ScoringPlan): Promise<void> {
  for (const m of plan.metrics) trace.metrics[m.name] ??= null;
  for (const r of plan.rewards) trace.rewards[r.name] ??= null;
  for (const j of plan.judges) trace.rewards[judgeRewardKey(j.entry)] ??= null;

  const run = async (what: string, fn: () => Promise<void>) => {
    try {
      await fn();
    } catch (err) {
      const e = toTraceError(err, "TaskError");
      if (e.type === "RolloutError") e.type = "TaskError";
      e.message = `${what}: ${e.message}`;
      trace.errors.push(e);
    }
  };
  await Promise.all(
    ordered(plan.metrics).map((m) =>
      run(`metric '${m.name}'`, async () => {
        const v = await m.fn(ctx);
        record(m.name, v, (k, s) => trace.metrics[k] = s, (k) => delete trace.metrics[k]);
      })
    ),
  );
  await Promise.all(
    ordered(plan.rewards).map((r) =>
      run(`reward '${r.name}'`, async () => {
        const v = await r.fn(ctx);
        const weight = r.weight ?? 1;
        record(r.name, v, (k, s) =>
          trace.rewards[k] = { score: s, weight }, (k) =>
          delete trace.rewards[k]);
      })
    ),
  );
  await Promise.all(plan.judges.map((j) => {
    const key = judgeRewardKey(j.entry);
    return run(`judge '${key}'`, async () => {
      const v = await j.plugin.score(j.context(ctx));
      const weight = j.entry.weight;
      record(
        key,
        v,
        (k, s) => trace.rewards[k] = { score: s, weight },
        (k) => delete trace.rewards[k],
      );
    });
  }));
}
