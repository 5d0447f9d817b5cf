/**
 * Scoring one trace: expected rewards and metrics are seeded as null, then metrics,
 * rewards and judges run (by priority, then name); a hook returning a mapping records
 * each key. A failing hook is a `TaskError` on the trace and leaves its seed null.
 * `reward = Σ score × weight` over non-null rewards (see `traceReward`).
 *
 * A judge's result is recorded under its reward key with the entry's weight: a number is
 * its reward; keyed numbers are several rewards (the key's seed is dropped); `{reward,
 * metrics}` is either of those plus metrics recorded as given. Everything a judge returns
 * is checked before anything is recorded, so a failing judge leaves only its null seed.
 *
 * @module
 */
import { TaskError, toTraceError } from "../../kit/errors.ts";
import type { JudgeEntry } from "../config/eval_config.ts";
import type {
  HookContext,
  JudgeContext,
  JudgePlugin,
  JudgeResult,
  JudgeScore,
  MetricHook,
  RewardHook,
  ScoreValue,
} from "../../kit/contract.ts";
import type { Trace } from "../../kit/trace/types.ts";
import { judgeRewardKey } from "../config/judge_key.ts";

export { judgeRewardKey };

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
  /** The reward key ({@link judgeRewardKey}). */
  key: string;
  /** Builds the judge's context (client, recording) for one trace. */
  context(base: HookContext): JudgeContext;
}

/** True when a judge result is `{reward, metrics}` rather than a plain score value. */
function isJudgeScore(value: JudgeResult): value is JudgeScore {
  return typeof value === "object" && value !== null && "metrics" in value &&
    typeof (value as { metrics: unknown }).metrics === "object" &&
    (value as { metrics: unknown }).metrics !== null;
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
    const entries = Object.entries(value).map(([k, v]) => [k, checkScore(`${name}[${k}]`, v)]);
    drop(name);
    for (const [k, v] of entries) put(k as string, v as number);
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
  for (const j of plan.judges) trace.rewards[j.key] ??= null;

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
  // groups run in order; an empty one is skipped without a Promise.all to await
  if (plan.metrics.length) {
    await Promise.all(
      ordered(plan.metrics).map((m) =>
        run(`metric '${m.name}'`, async () => {
          const v = await m.fn(ctx);
          record(m.name, v, (k, s) => trace.metrics[k] = s, (k) => delete trace.metrics[k]);
        })
      ),
    );
  }
  if (plan.rewards.length) {
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
  }
  if (plan.judges.length === 0) return;
  await Promise.all(plan.judges.map((j) => {
    const key = j.key;
    return run(`judge '${key}'`, async () => {
      const result = await j.plugin.score(j.context(ctx));
      const [value, metrics] = isJudgeScore(result)
        ? [result.reward, result.metrics]
        : [result, {} as Record<string, number>];
      for (const [k, v] of Object.entries(metrics)) checkScore(`${key} metric ${k}`, v);
      const weight = j.entry.weight;
      record(
        key,
        value,
        (k, s) => trace.rewards[k] = { score: s, weight },
        (k) => delete trace.rewards[k],
      );
      for (const [k, v] of Object.entries(metrics)) trace.metrics[k] = v;
    });
  }));
}
