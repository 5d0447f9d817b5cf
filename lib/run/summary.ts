/**
 * The run summary, accumulated episode by episode in constant memory: reward means
 * (over clean traces, and over all traces with errored ones as 0), error fraction,
 * per-reward and per-metric means, token usage including judges, per-phase mean times.
 *
 * @module
 */
import { numTurns, traceReward } from "../trace/derived.ts";
import type { Episode, Span, Trace } from "../trace/types.ts";

class Mean {
  sum = 0;
  n = 0;
  add(v: number) {
    this.sum += v;
    this.n++;
  }
  get value(): number | null {
    return this.n ? this.sum / this.n : null;
  }
}

const PHASES = ["boot", "setup", "agent", "model", "harness", "finalize", "scoring"] as const;

/** The summary as written to `summary.json`. */
export interface RunSummary {
  run: { name: string; dir: string };
  model: string;
  taskset: string;
  harness: string;
  runtime: string;
  counts: {
    episodes: number;
    expected: number;
    traces: number;
    errored_episodes: number;
    errored_traces: number;
  };
  reward: { mean: number | null; mean_all: number | null };
  error_fraction: number | null;
  rewards: Record<string, number | null>;
  metrics: Record<string, number | null>;
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    cached_input_tokens: number;
    reasoning_tokens: number;
    judge_prompt_tokens: number;
    judge_completion_tokens: number;
  };
  turns_mean: number | null;
  times_mean_s: Record<(typeof PHASES)[number], number | null>;
  errors_by_type: Record<string, number>;
  wall_time_s: number;
  output_dir: string;
}

function spanSeconds(s: Span): number | null {
  return s.start !== null && s.end !== null ? s.end - s.start : null;
}

/** Accumulates episodes into a {@link RunSummary}. */
export class SummaryAccumulator {
  #episodes = 0;
  #erroredEpisodes = 0;
  #traces = 0;
  #erroredTraces = 0;
  #clean = new Mean();
  #all = new Mean();
  #turns = new Mean();
  #rewards = new Map<string, Mean>();
  #metrics = new Map<string, Mean>();
  #phases = new Map<string, Mean>(PHASES.map((p) => [p, new Mean()]));
  #errors = new Map<string, number>();
  #usage = {
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_input_tokens: 0,
    reasoning_tokens: 0,
    judge_prompt_tokens: 0,
    judge_completion_tokens: 0,
  };
  /** Recent error messages (newest last), for live display. */
  recentErrors: string[] = [];

  /** Adds one finished episode. */
  add(ep: Episode): void {
    this.#episodes++;
    if (!ep.ok) this.#erroredEpisodes++;
    for (const e of ep.errors) this.#noteError(e.type, e.message);
    for (const t of ep.traces) this.#addTrace(t);
  }

  #noteError(type: string, message: string) {
    this.#errors.set(type, (this.#errors.get(type) ?? 0) + 1);
    this.recentErrors.push(`${type}: ${message.split("\n")[0].slice(0, 160)}`);
    if (this.recentErrors.length > 5) this.recentErrors.shift();
  }

  #addTrace(t: Trace) {
    this.#traces++;
    if (!t.agent.trainable) return;
    const reward = traceReward(t);
    if (t.ok) this.#clean.add(reward);
    else this.#erroredTraces++;
    this.#all.add(t.ok ? reward : 0);
    this.#turns.add(numTurns(t));
    for (const e of t.errors) this.#noteError(e.type, e.message);
    for (const [k, v] of Object.entries(t.rewards)) {
      if (!this.#rewards.has(k)) this.#rewards.set(k, new Mean());
      if (v && t.ok) this.#rewards.get(k)!.add(v.score);
    }
    for (const [k, v] of Object.entries(t.metrics)) {
      if (!this.#metrics.has(k)) this.#metrics.set(k, new Mean());
      if (v !== null && t.ok) this.#metrics.get(k)!.add(v);
    }
    for (const c of t.calls) {
      if (!c.usage) continue;
      this.#usage.prompt_tokens += c.usage.prompt_tokens;
      this.#usage.completion_tokens += c.usage.completion_tokens;
      this.#usage.cached_input_tokens += c.usage.cached_input_tokens;
      this.#usage.reasoning_tokens += c.usage.reasoning_tokens;
    }
    for (const u of t.extra_usage) {
      this.#usage.judge_prompt_tokens += u.prompt_tokens;
      this.#usage.judge_completion_tokens += u.completion_tokens;
    }
    const tm = t.timing;
    const put = (k: string, v: number | null) => v !== null && this.#phases.get(k)!.add(v);
    put("boot", spanSeconds(tm.boot));
    put("setup", spanSeconds(tm.setup));
    put("agent", spanSeconds(tm.agent));
    if (tm.agent.start !== null) {
      put("model", tm.agent.model.duration);
      put("harness", tm.agent.harness.duration);
    }
    put("finalize", spanSeconds(tm.finalize));
    put("scoring", spanSeconds(tm.scoring));
  }

  /** Episodes added so far. */
  get episodes(): number {
    return this.#episodes;
  }

  /** Episodes that were not ok. */
  get erroredEpisodes(): number {
    return this.#erroredEpisodes;
  }

  /** Mean reward over clean traces (null when none). */
  get meanReward(): number | null {
    return this.#clean.value;
  }

  /** Mean reward over all traces, errored ones as 0. */
  get meanRewardAll(): number | null {
    return this.#all.value;
  }

  /** The summary so far. */
  summary(
    base:
      & Omit<
        RunSummary,
        | "counts"
        | "reward"
        | "error_fraction"
        | "rewards"
        | "metrics"
        | "usage"
        | "turns_mean"
        | "times_mean_s"
        | "errors_by_type"
      >
      & { expected: number },
  ): RunSummary {
    const { expected, ...rest } = base;
    const means = (m: Map<string, Mean>) =>
      Object.fromEntries([...m].map(([k, v]) => [k, v.value]));
    return {
      ...rest,
      counts: {
        episodes: this.#episodes,
        expected,
        traces: this.#traces,
        errored_episodes: this.#erroredEpisodes,
        errored_traces: this.#erroredTraces,
      },
      reward: { mean: this.#clean.value, mean_all: this.#all.value },
      error_fraction: this.#episodes ? this.#erroredEpisodes / this.#episodes : null,
      rewards: means(this.#rewards),
      metrics: means(this.#metrics),
      usage: { ...this.#usage },
      turns_mean: this.#turns.value,
      times_mean_s: means(this.#phases) as RunSummary["times_mean_s"],
      errors_by_type: Object.fromEntries(this.#errors),
    };
  }
}

function fmt(v: number | null, digits = 3): string {
  return v === null ? "—" : v.toFixed(digits);
}

/** The reward as shown: clean mean, with the all-traces mean in parentheses when some errored. */
export function rewardText(s: Pick<RunSummary, "reward" | "counts">): string {
  const base = fmt(s.reward.mean);
  return s.counts.errored_traces > 0 ? `${base} (${fmt(s.reward.mean_all)})` : base;
}

/** The final summary table (plain text). */
export function renderSummary(s: RunSummary): string {
  const lines: string[] = [];
  const row = (k: string, v: string) => lines.push(`${k.padEnd(10)} ${v}`);
  row("run", `${s.taskset} · ${s.harness} harness · ${s.runtime} runtime · model ${s.model}`);
  row("done", `${s.counts.episodes}/${s.counts.expected} episodes · ${s.wall_time_s.toFixed(1)}s`);
  row("reward", rewardText(s));
  row(
    "errors",
    `${fmt(s.error_fraction, 2)}` +
      (Object.keys(s.errors_by_type).length
        ? `  (${Object.entries(s.errors_by_type).map(([k, v]) => `${k} ${v}`).join(", ")})`
        : ""),
  );
  const kv = (o: Record<string, number | null>) =>
    Object.entries(o).map(([k, v]) => `${k} ${fmt(v)}`).join(" · ");
  if (Object.keys(s.rewards).length) row("rewards", kv(s.rewards));
  if (Object.keys(s.metrics).length) row("metrics", kv(s.metrics));
  const u = s.usage;
  row(
    "usage",
    `in ${u.prompt_tokens} (cached ${u.cached_input_tokens}) · out ${u.completion_tokens} (reasoning ${u.reasoning_tokens})` +
      (u.judge_prompt_tokens + u.judge_completion_tokens
        ? ` · + judge in ${u.judge_prompt_tokens} out ${u.judge_completion_tokens}`
        : "") +
      ` · turns ${fmt(s.turns_mean, 1)}`,
  );
  const t = s.times_mean_s;
  row(
    "time",
    `boot ${fmt(t.boot, 2)}s · setup ${fmt(t.setup, 2)}s · agent ${fmt(t.agent, 2)}s (model ${
      fmt(t.model, 2)
    }s + harness ${fmt(t.harness, 2)}s) · finalize ${fmt(t.finalize, 2)}s · scoring ${
      fmt(t.scoring, 2)
    }s`,
  );
  row("output", s.output_dir);
  return lines.join("\n");
}
