/**
 * The run summary, accumulated episode by episode in constant memory: reward means
 * (over clean traces, and over all traces with errored ones as 0), error fraction,
 * per-reward and per-metric means, token usage including judges, per-phase mean times,
 * errors by type. After a resume it covers the whole run: kept episodes are added too.
 *
 * @module
 */
import { numTurns, traceReward } from "../../kit/trace/derived.ts";
import type { Episode, Span, Trace } from "../../kit/trace/types.ts";

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

/** A runtime whose teardown could not be confirmed at the end of the run. */
export interface UnconfirmedSandbox {
  type: string;
  id: string | null;
  error: string;
}

/** The summary as written to `summary.json`. */
export interface RunSummary {
  run: { name: string; dir: string };
  model: string;
  taskset: string;
  harness: string;
  runtime: string;
  /** `completed`, or `cancelled` when a signal stopped the run. */
  status: "completed" | "cancelled";
  /** The launch number (`logs/attempt_<n>`); 2 and up are resumes. */
  attempt: number;
  counts: {
    /** Episodes in traces.jsonl: kept from earlier launches plus written by this one. */
    episodes: number;
    /** Selected tasks × num_rollouts. */
    expected: number;
    /** Episodes kept from earlier launches (resume). */
    kept: number;
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
    /** Sum of the provider-reported costs (null when no call reported one). */
    cost: number | null;
    judge_prompt_tokens: number;
    judge_completion_tokens: number;
  };
  turns_mean: number | null;
  times_mean_s: Record<(typeof PHASES)[number], number | null>;
  errors_by_type: Record<string, number>;
  /** One real message per error type (the first seen, first line) and its HTTP status. */
  error_examples: Record<string, { message: string; status_code: number | null }>;
  /** Wall time of this launch. */
  wall_time_s: number;
  /** Runtimes the run could not confirm as stopped (also printed on stderr). */
  unconfirmed_sandboxes: UnconfirmedSandbox[];
  /** The `--fail-on-error` threshold and whether the run went past it (null when unset). */
  fail_on_error: { threshold: number; exceeded: boolean } | null;
  output_dir: string;
}

/** The fields of a summary that the accumulator does not compute. */
export type SummaryBase =
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
    | "error_examples"
    | "fail_on_error"
  >
  & { expected: number; fail_on_error_threshold: number | null };

function spanSeconds(s: Span | undefined): number | null {
  return s && typeof s.start === "number" && typeof s.end === "number" ? s.end - s.start : null;
}

const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/**
 * True when `errored` of `episodes` episodes goes past a `--fail-on-error` threshold: a
 * threshold below 1 is a fraction (exceeded when the errored fraction is above it, so 0
 * means "any error"), 1 and up a count (exceeded when that many episodes errored).
 */
export function exceedsThreshold(threshold: number, errored: number, episodes: number): boolean {
  if (threshold < 1) return episodes > 0 && errored / episodes > threshold;
  return errored >= threshold;
}

/** Accumulates episodes into a {@link RunSummary}. */
export class SummaryAccumulator {
  #episodes = 0;
  #kept = 0;
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
  #lastError = new Map<string, string>();
  #firstError = new Map<string, { message: string; status_code: number | null }>();
  #cost: number | null = null;
  #usage = {
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_input_tokens: 0,
    reasoning_tokens: 0,
    judge_prompt_tokens: 0,
    judge_completion_tokens: 0,
  };

  /** Adds one finished episode; `kept` marks one carried over from an earlier launch. */
  add(ep: Episode, kept = false): void {
    this.#episodes++;
    if (kept) this.#kept++;
    if (!ep.ok) this.#erroredEpisodes++;
    for (const e of ep.errors ?? []) this.#noteError(e.type, e.message, e.status_code);
    for (const t of ep.traces ?? []) this.#addTrace(t);
  }

  #noteError(type: string, message: string, status: number | null | undefined) {
    this.#errors.set(type, (this.#errors.get(type) ?? 0) + 1);
    const line = String(message ?? "").split("\n").find((l) => l.trim() !== "") ?? "";
    this.#lastError.set(type, line.slice(0, 200));
    if (!this.#firstError.has(type)) {
      this.#firstError.set(type, {
        message: line.slice(0, 500),
        status_code: typeof status === "number" ? status : null,
      });
    }
  }

  #addTrace(t: Trace) {
    this.#traces++;
    for (const e of t.errors ?? []) this.#noteError(e.type, e.message, e.status_code);
    if (!t.ok) this.#erroredTraces++;
    if (t.agent?.trainable === false) return;
    const reward = traceReward(t);
    if (t.ok) this.#clean.add(reward);
    this.#all.add(t.ok ? reward : 0);
    this.#turns.add(numTurns(t));
    const rewards = t.rewards ?? {};
    for (const k of Object.keys(rewards)) {
      let mean = this.#rewards.get(k);
      if (mean === undefined) this.#rewards.set(k, mean = new Mean());
      const v = rewards[k];
      if (v && t.ok) mean.add(v.score);
    }
    const metrics = t.metrics ?? {};
    for (const k of Object.keys(metrics)) {
      let mean = this.#metrics.get(k);
      if (mean === undefined) this.#metrics.set(k, mean = new Mean());
      const v = metrics[k];
      if (typeof v === "number" && t.ok) mean.add(v);
    }
    for (const c of t.calls ?? []) {
      const u = c.usage;
      if (!u) continue;
      this.#usage.prompt_tokens += num(u.prompt_tokens);
      this.#usage.completion_tokens += num(u.completion_tokens);
      this.#usage.cached_input_tokens += num(u.cached_input_tokens);
      this.#usage.reasoning_tokens += num(u.reasoning_tokens);
      if (typeof u.cost === "number") this.#cost = (this.#cost ?? 0) + u.cost;
    }
    for (const u of t.extra_usage ?? []) {
      this.#usage.judge_prompt_tokens += num(u.prompt_tokens);
      this.#usage.judge_completion_tokens += num(u.completion_tokens);
    }
    const tm = t.timing;
    if (!tm) return;
    const put = (k: string, v: number | null) => {
      if (v !== null && Number.isFinite(v)) this.#phases.get(k)!.add(v);
    };
    put("boot", spanSeconds(tm.boot));
    put("setup", spanSeconds(tm.setup));
    put("agent", spanSeconds(tm.agent));
    if (tm.agent && tm.agent.start !== null) {
      put("model", tm.agent.model?.duration ?? null);
      put("harness", tm.agent.harness?.duration ?? null);
    }
    put("finalize", spanSeconds(tm.finalize));
    put("scoring", spanSeconds(tm.scoring));
  }

  /** Episodes added so far (kept included). */
  get episodes(): number {
    return this.#episodes;
  }

  /** Episodes kept from earlier launches. */
  get kept(): number {
    return this.#kept;
  }

  /** Episodes that were not ok. */
  get erroredEpisodes(): number {
    return this.#erroredEpisodes;
  }

  /** Traces that were not ok. */
  get erroredTraces(): number {
    return this.#erroredTraces;
  }

  /** Mean reward over clean traces (null when none). */
  get meanReward(): number | null {
    return this.#clean.value;
  }

  /** Mean reward over all traces, errored ones as 0. */
  get meanRewardAll(): number | null {
    return this.#all.value;
  }

  /** Error counts by type with the latest message of each, most frequent first. */
  errorTypes(): { type: string; count: number; last: string }[] {
    return [...this.#errors].sort((a, b) => b[1] - a[1]).map(([type, count]) => ({
      type,
      count,
      last: this.#lastError.get(type) ?? "",
    }));
  }

  /** The summary so far. */
  summary(base: SummaryBase): RunSummary {
    const { expected, fail_on_error_threshold: threshold, ...rest } = base;
    const means = (m: Map<string, Mean>) =>
      Object.fromEntries([...m].map(([k, v]) => [k, v.value]));
    return {
      ...rest,
      counts: {
        episodes: this.#episodes,
        expected,
        kept: this.#kept,
        traces: this.#traces,
        errored_episodes: this.#erroredEpisodes,
        errored_traces: this.#erroredTraces,
      },
      reward: { mean: this.#clean.value, mean_all: this.#all.value },
      error_fraction: this.#episodes ? this.#erroredEpisodes / this.#episodes : null,
      rewards: means(this.#rewards),
      metrics: means(this.#metrics),
      usage: { ...this.#usage, cost: this.#cost },
      turns_mean: this.#turns.value,
      times_mean_s: means(this.#phases) as RunSummary["times_mean_s"],
      errors_by_type: Object.fromEntries(this.#errors),
      error_examples: Object.fromEntries(this.#firstError),
      fail_on_error: threshold === null ? null : {
        threshold,
        exceeded: exceedsThreshold(threshold, this.#erroredEpisodes, this.#episodes),
      },
    };
  }
}

function fmt(v: number | null, digits = 3): string {
  return v === null ? "—" : v.toFixed(digits);
}

/** The reward as shown: clean mean, with the all-traces mean in parentheses when some errored. */
export function rewardText(
  s: {
    reward: { mean: number | null; mean_all: number | null };
    counts: { errored_traces: number };
  },
): string {
  const base = fmt(s.reward.mean);
  return s.counts.errored_traces > 0 ? `${base} (${fmt(s.reward.mean_all)})` : base;
}

/** The final summary table (plain text). */
export function renderSummary(s: RunSummary): string {
  const lines: string[] = [];
  const row = (k: string, v: string) => lines.push(`${k.padEnd(10)} ${v}`);
  row("run", `${s.taskset} · ${s.harness} harness · ${s.runtime} runtime · model ${s.model}`);
  const kept = s.counts.kept ? ` (${s.counts.kept} kept from earlier launches)` : "";
  row(
    "done",
    `${s.counts.episodes}/${s.counts.expected} episodes${kept} · ${s.wall_time_s.toFixed(1)}s` +
      (s.status === "cancelled" ? " · cancelled" : ""),
  );
  // clean traces without a single reward: nothing was set to score them
  const unscored = s.counts.traces > s.counts.errored_traces && Object.keys(s.rewards).length === 0;
  row(
    "reward",
    rewardText(s) +
      (unscored
        ? "  (nothing scored these traces: the taskset has no reward and no judge is set;" +
          ' add one, e.g. [[env.taskset.task.judges]] id = "match")'
        : ""),
  );
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
      (u.cost !== null ? ` · cost ${u.cost.toFixed(4)}` : "") +
      ` · turns ${fmt(s.turns_mean, 1)}`,
  );
  const t = s.times_mean_s;
  const sec = (v: number | null) => (v === null ? "—" : `${v.toFixed(2)}s`);
  row(
    "time",
    `boot ${sec(t.boot)} · setup ${sec(t.setup)} · agent ${sec(t.agent)} (model ${
      sec(t.model)
    } + harness ${sec(t.harness)}) · finalize ${sec(t.finalize)} · scoring ${sec(t.scoring)}`,
  );
  if (s.unconfirmed_sandboxes.length) {
    row(
      "sandboxes",
      `${s.unconfirmed_sandboxes.length} not confirmed stopped: ` +
        s.unconfirmed_sandboxes.map((x) => `${x.type} ${x.id ?? "(no id)"}`).join(", "),
    );
  }
  if (s.fail_on_error?.exceeded) {
    row(
      "failed",
      `${s.counts.errored_episodes} errored episodes exceed --fail-on-error ${s.fail_on_error.threshold}`,
    );
  }
  row("output", s.output_dir);
  return lines.join("\n");
}
