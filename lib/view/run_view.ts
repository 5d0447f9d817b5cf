/**
 * What the page shows of one run, computed from its {@link RunIndex}: the header (from
 * `summary.json` when there is one, else `configs/eval.json`, else the episodes), the
 * reward mean with its confidence interval and histogram, the per-task table with pass@k,
 * errors grouped by type with their distinct messages, and the compact episode list items
 * the page asks for by task or error type.
 *
 * @module
 */
import type { EpisodeRow } from "./episode_row.ts";
import type { RunIndex } from "./run_index.ts";
import {
  type ReplayView,
  replayView,
  type RunKind,
  type ValidateView,
  validateView,
} from "./check_view.ts";
import { type Bin, histogram, isBinary, type MeanCi, meanCi, passAtK } from "./stats.ts";

/** The run's identity and totals. */
export interface RunHeader {
  title: string;
  dir: string;
  taskset: string | null;
  model: string | null;
  harness: string | null;
  runtime: string | null;
  /** `completed` / `cancelled` from summary.json, else `running or unfinished`. */
  status: string;
  episodes: number;
  expected: number | null;
  errored: number;
  unreadable: number;
  /** Epoch seconds of the earliest episode start. */
  started: number | null;
  wallSeconds: number | null;
  tokens: number;
  judgeTokens: number;
  cost: number | null;
}

/** One line of the per-task table. */
export interface TaskRow {
  key: string;
  label: string;
  /** Rollouts of the task. */
  n: number;
  /** Mean reward over the rollouts that did not error (null when all did). */
  mean: number | null;
  /** Mean reward over all rollouts, errored ones as 0. */
  meanAll: number;
  errors: number;
  /** pass@1 and pass@n (n = rollouts) when rewards are 0/1, errored rollouts failing. */
  pass1: number | null;
  passN: number | null;
}

/** Errors of one type, with each distinct message. */
export interface ErrorGroup {
  type: string;
  count: number;
  messages: { message: string; count: number; episode: number }[];
}

/** Everything the page shows of one run but its episodes. */
export interface RunView {
  version: number;
  /** Which command wrote the run. */
  kind: RunKind;
  /** A validate run's checks, by task. */
  validate: ValidateView | null;
  /** A replay run's score changes per task against its source. */
  replay: ReplayView | null;
  header: RunHeader;
  /** Over the episodes that did not error. */
  reward: MeanCi;
  /** Mean over all episodes, errored ones as 0. */
  rewardAll: number | null;
  binary: boolean;
  histogram: Bin[];
  tasks: TaskRow[];
  errors: ErrorGroup[];
}

/** One line of an episode list (the page fetches these by task or error type). */
export interface EpisodeItem {
  i: number;
  id: string;
  task: string;
  label: string;
  ok: boolean;
  reward: number | null;
  /** The first error's type. */
  error: string | null;
  /** Every distinct error type of the episode. */
  errors: string[];
  turns: number;
  tokens: number;
  seconds: number | null;
  stop: string | null;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const num = (v: unknown): number | null => typeof v === "number" && Number.isFinite(v) ? v : null;
const at = (o: unknown, ...path: string[]): unknown => {
  let v = o;
  for (const p of path) v = isObj(v) ? v[p] : undefined;
  return v;
};

function headerOf(index: RunIndex): RunHeader {
  const s = index.summary;
  const c = index.config;
  const rows = index.rows;
  let tokens = 0;
  let judgeTokens = 0;
  let cost: number | null = null;
  let started: number | null = null;
  let ended: number | null = null;
  let errored = 0;
  for (const r of rows) {
    tokens += r.tokens;
    judgeTokens += r.judgeTokens;
    if (r.cost !== null) cost = (cost ?? 0) + r.cost;
    if (r.start !== null && (started === null || r.start < started)) started = r.start;
    if (r.end !== null && (ended === null || r.end > ended)) ended = r.end;
    if (!r.ok) errored++;
  }
  const first = rows[0];
  const done = index.kind === "validate"
    ? num(at(s, "outcomes", "missing")) === 0 ? "completed" : null
    : index.kind === "replay" && s !== null
    ? "completed"
    : null;
  return {
    title: str(at(s, "run", "name")) ?? str(at(c, "run", "name")) ?? index.name,
    dir: index.dir,
    taskset: str(at(s, "taskset")) ?? str(at(c, "env", "taskset", "id")) ??
      str(at(c, "env", "id")) ?? str(at(c, "taskset", "id")) ??
      (first?.task.key.split(":")[0] ?? null),
    model: str(at(s, "model")) ?? str(at(c, "model")),
    harness: str(at(s, "harness")) ?? str(at(c, "env", "agent", "harness", "id")),
    runtime: str(at(s, "runtime")) ?? str(at(c, "env", "agent", "runtime", "type")) ??
      str(at(c, "runtime", "type")),
    status: str(at(s, "status")) ?? done ?? "running or unfinished",
    episodes: rows.length,
    expected: num(at(s, "counts", "expected")),
    errored,
    unreadable: index.unreadable,
    started,
    wallSeconds: num(at(s, "wall_time_s")) ??
      (started !== null && ended !== null ? ended - started : null),
    tokens,
    judgeTokens,
    cost,
  };
}

function tasksOf(rows: EpisodeRow[], binary: boolean): TaskRow[] {
  const byKey = new Map<string, EpisodeRow[]>();
  for (const r of rows) {
    const list = byKey.get(r.task.key);
    if (list) list.push(r);
    else byKey.set(r.task.key, [r]);
  }
  const out: TaskRow[] = [];
  for (const [key, list] of byKey) {
    let clean = 0;
    let sumClean = 0;
    let passed = 0;
    for (const r of list) {
      if (r.ok && r.reward !== null) {
        clean++;
        sumClean += r.reward;
        if (r.reward === 1) passed++;
      }
    }
    const n = list.length;
    out.push({
      key,
      label: list[0]?.task.label ?? key,
      n,
      mean: clean ? sumClean / clean : null,
      meanAll: sumClean / n,
      errors: n - clean,
      pass1: binary ? passAtK(n, passed, 1) : null,
      passN: binary ? passAtK(n, passed, n) : null,
    });
  }
  return out;
}

function errorsOf(rows: EpisodeRow[]): ErrorGroup[] {
  const groups = new Map<string, ErrorGroup>();
  rows.forEach((r, i) => {
    for (const e of r.errors) {
      let g = groups.get(e.type);
      if (!g) groups.set(e.type, g = { type: e.type, count: 0, messages: [] });
      g.count++;
      const message = e.message.length > 2000 ? e.message.slice(0, 2000) + "…" : e.message;
      const m = g.messages.find((x) => x.message === message);
      if (m) m.count++;
      else if (g.messages.length < 20) g.messages.push({ message, count: 1, episode: i });
    }
  });
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/** Computes the view of a run from its index. */
export function runView(index: RunIndex): RunView {
  const rows = index.rows;
  const clean: number[] = [];
  let sumAll = 0;
  for (const r of rows) {
    if (r.ok && r.reward !== null) {
      clean.push(r.reward);
      sumAll += r.reward;
    }
  }
  const binary = isBinary(clean);
  const tasks = tasksOf(rows, binary);
  return {
    version: index.version,
    kind: index.kind,
    validate: index.kind === "validate" ? validateView(index.checks, index.summary) : null,
    replay: index.kind === "replay"
      ? replayView(index.summary, new Map(tasks.map((t) => [t.key, t.label])), index.sourceRun)
      : null,
    header: headerOf(index),
    reward: meanCi(clean),
    rewardAll: rows.length ? sumAll / rows.length : null,
    binary,
    histogram: histogram(clean),
    tasks,
    errors: errorsOf(rows),
  };
}

/** The list item of episode `i`. */
export function episodeItem(row: EpisodeRow, i: number): EpisodeItem {
  return {
    i,
    id: row.id,
    task: row.task.key,
    label: row.task.label,
    ok: row.ok,
    reward: row.reward,
    error: row.errors[0]?.type ?? null,
    errors: [...new Set(row.errors.map((e) => e.type))],
    turns: row.turns,
    tokens: row.tokens,
    seconds: row.start !== null && row.end !== null ? row.end - row.start : null,
    stop: row.stop,
  };
}

/** Episodes of one task (`task`), with one error type (`error`), or all, as list items. */
export function episodeItems(
  rows: EpisodeRow[],
  filter: { task?: string | null; error?: string | null },
): EpisodeItem[] {
  const out: EpisodeItem[] = [];
  rows.forEach((r, i) => {
    if (filter.task != null && r.task.key !== filter.task) return;
    if (filter.error != null && !r.errors.some((e) => e.type === filter.error)) return;
    out.push(episodeItem(r, i));
  });
  return out;
}
