/**
 * The compact row the viewer keeps per episode of `traces.jsonl`, read tolerantly: any
 * field may be missing, null or of another shape (Python `verifiers` v1 writes its
 * episodes with `exclude_none`), and the row is still made from what is there.
 *
 * @module
 */

/** An error of an episode or trace, reduced to what the viewer shows. */
export interface RowError {
  type: string;
  message: string;
}

/** The task of an episode as the viewer identifies and labels it. */
export interface RowTask {
  /** `task.key`, else `task.hash`, else the task data's JSON. */
  key: string;
  /** A short human label: the task's name or the start of its prompt. */
  label: string;
}

/** What the viewer keeps of one episode (the full line is read again on demand). */
export interface EpisodeRow {
  id: string;
  task: RowTask;
  ok: boolean;
  /** Mean over the episode's traces of `Σ score × weight` of the non-null rewards. */
  reward: number | null;
  errors: RowError[];
  turns: number;
  /** Prompt (incl. cached) + completion tokens of the model calls. */
  tokens: number;
  /** Tokens of judge and other out-of-band calls (`extra_usage`). */
  judgeTokens: number;
  cost: number | null;
  /** Epoch seconds of the first trace's start. */
  start: number | null;
  /** Latest end time found in the traces' timing, epoch seconds. */
  end: number | null;
  stop: string | null;
}

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const num = (v: unknown): number | null => typeof v === "number" && Number.isFinite(v) ? v : null;
const str = (v: unknown): string | null => (typeof v === "string" ? v : null);

/** The first text of a string, a list of content parts, or a list of messages. */
function firstText(v: unknown): string | null {
  if (typeof v === "string") return v;
  for (const part of arr(v)) {
    if (isObj(part) && typeof part.text === "string") return part.text;
    if (isObj(part) && part.content !== undefined) return firstText(part.content);
  }
  return null;
}

function taskOf(task: unknown): RowTask {
  const t = isObj(task) ? task : {};
  const data = isObj(t.data) ? t.data : {};
  const key = str(t.key) || str(t.hash) || JSON.stringify(data);
  const prompt = firstText(data.prompt) ?? firstText(data.question) ?? firstText(data.instruction);
  const name = str(data.name);
  const label = (name ?? prompt ?? key).replace(/\s+/g, " ").trim().slice(0, 160);
  return { key, label };
}

function errorsOf(list: unknown): RowError[] {
  const out: RowError[] = [];
  for (const e of arr(list)) {
    if (!isObj(e)) continue;
    out.push({
      type: str(e.type) ?? "Error",
      message: str(e.message) ?? "(no message)",
    });
  }
  return out;
}

/** `Σ score × weight` over the non-null rewards of a trace (weight 1 when absent). */
function rewardOf(rewards: unknown): number {
  let sum = 0;
  if (!isObj(rewards)) return sum;
  for (const r of Object.values(rewards)) {
    if (!isObj(r)) continue;
    const score = num(r.score);
    if (score === null) continue;
    sum += score * (num(r.weight) ?? 1);
  }
  return sum;
}

function usageTokens(u: unknown): { tokens: number; cost: number | null } {
  if (!isObj(u)) return { tokens: 0, cost: null };
  const tokens = (num(u.prompt_tokens) ?? 0) + (num(u.cached_input_tokens) ?? 0) +
    (num(u.completion_tokens) ?? 0);
  return { tokens, cost: num(u.cost) };
}

/** Builds the row of one parsed episode line. */
export function episodeRow(episode: unknown): EpisodeRow {
  const ep = isObj(episode) ? episode : {};
  const traces = arr(ep.traces).filter(isObj);
  let errors = errorsOf(ep.errors);
  if (errors.length === 0) errors = traces.flatMap((t) => errorsOf(t.errors));
  let rewardSum = 0;
  let turns = 0;
  let tokens = 0;
  let judgeTokens = 0;
  let cost: number | null = null;
  let start: number | null = null;
  let end: number | null = null;
  let stop: string | null = null;
  const addCost = (c: number | null) => {
    if (c !== null) cost = (cost ?? 0) + c;
  };
  for (const t of traces) {
    rewardSum += rewardOf(t.rewards);
    for (const n of arr(t.nodes)) if (isObj(n) && n.sampled === true) turns++;
    for (const c of arr(t.calls)) {
      if (!isObj(c)) continue;
      const u = usageTokens(c.usage);
      tokens += u.tokens;
      addCost(u.cost);
    }
    for (const x of arr(t.extra_usage)) {
      const u = usageTokens(x);
      judgeTokens += u.tokens;
      addCost(u.cost);
    }
    stop ??= str(t.stop_condition);
    const timing = isObj(t.timing) ? t.timing : {};
    const s = num(timing.start);
    if (s !== null && s > 0 && (start === null || s < start)) start = s;
    for (const phase of Object.values(timing)) {
      const e = isObj(phase) ? num(phase.end) : null;
      if (e !== null && e > 0 && (end === null || e > end)) end = e;
    }
  }
  return {
    id: str(ep.id) ?? "",
    task: taskOf(ep.task ?? traces[0]?.task),
    ok: ep.ok === true,
    reward: traces.length ? rewardSum / traces.length : null,
    errors,
    turns,
    tokens,
    judgeTokens,
    cost,
    start,
    end,
    stop,
  };
}
