/**
 * What the viewer shows of the runs `vf validate` and `vf replay` write. A validate run
 * has no episodes: its `results.jsonl` holds one row per task check (see
 * `lib/run/validate_results.ts`), shown as which tasks' gold solution or setup failed and
 * why (the error their hook raised, or its timeout). A replay run is a run of rescored
 * traces whose `summary.json` names its source run and gives, per task, the rescored
 * rewards and the source's; the view adds the change per task and the spread of the
 * rescores (judge variance with `-r`), and the source run is opened beside it.
 *
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";

/** Which command wrote a run folder. */
export type RunKind = "eval" | "validate" | "replay";

/** The kind of the run in `dir`, from its saved config. */
export function runKind(dir: string): RunKind {
  if (existsSync(join(dir, "configs", "validate.json"))) return "validate";
  if (existsSync(join(dir, "configs", "replay.json"))) return "replay";
  if (existsSync(join(dir, "results.jsonl")) && !existsSync(join(dir, "traces.jsonl"))) {
    return "validate";
  }
  return "eval";
}

/** The saved config of a run: `configs/<kind>.json` (`eval.json` for an eval). */
export function configFile(dir: string, kind: RunKind): string {
  return join(dir, "configs", `${kind}.json`);
}

/** One check of a task (gold: setup + validate hook; setup: setup alone). */
export interface CheckPart {
  valid: boolean;
  reason: string;
  error: string | null;
  errorType: string | null;
  seconds: number | null;
}

/** One task of a validate run. */
export interface CheckRow extends CheckPart {
  key: string;
  label: string;
  index: number | null;
  mode: string;
  gold: CheckPart | null;
  setup: CheckPart | null;
}

/** What the page shows of a validate run. */
export interface ValidateView {
  mode: string | null;
  total: number | null;
  outcomes: Record<string, number>;
  checks: CheckRow[];
}

/** One task of a replay: its rescored rewards beside the source's. */
export interface ReplayTask {
  key: string;
  label: string;
  rewards: number[];
  mean: number | null;
  /** Spread of the rescores (population standard deviation). */
  std: number | null;
  sourceRewards: number[];
  sourceMean: number | null;
  /** `mean - sourceMean`. */
  change: number | null;
}

/** What the page shows of a replay run. */
export interface ReplayView {
  /** The source run folder as the replay recorded it. */
  source: string | null;
  /** Position of the source run among the viewed runs, when it is open. */
  sourceRun: number | null;
  rescores: number | null;
  skippedSignals: string[];
  tasks: ReplayTask[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: unknown): number | null => typeof v === "number" && Number.isFinite(v) ? v : null;
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);
const nums = (v: unknown): number[] =>
  Array.isArray(v) ? v.filter((x): x is number => num(x) !== null) : [];
const mean = (v: number[]): number | null =>
  v.length ? v.reduce((a, b) => a + b, 0) / v.length : null;

function part(row: unknown): CheckPart | null {
  if (!isObj(row)) return null;
  const valid = row.valid === true;
  return {
    valid,
    reason: str(row.reason) ?? (valid ? "valid" : "invalid"),
    error: str(row.error),
    errorType: str(row.error_type),
    seconds: num(row.elapsed),
  };
}

/** The rows of a validate run's `results.jsonl` (lines that are not JSON skipped). */
export function readChecks(dir: string): CheckRow[] {
  let text = "";
  try {
    text = readFileSync(join(dir, "results.jsonl"), "utf8");
  } catch {
    return [];
  }
  const out: CheckRow[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    const p = part(row);
    if (!p || !isObj(row)) continue;
    const index = num(row.index);
    const position = num(row.task_position) ?? out.length;
    const name = str(row.name);
    out.push({
      ...p,
      key: str(row.task_key) ?? `task-${index ?? position}`,
      label: name ? `${index ?? position}: ${name}` : `task ${index ?? position}`,
      index,
      mode: str(row.mode) ?? "all",
      gold: part(row.gold),
      setup: part(row.setup),
    });
  }
  return out;
}

/** The view of a validate run from its checks and `summary.json`. */
export function validateView(checks: CheckRow[], summary: unknown): ValidateView {
  const outcomes: Record<string, number> = { valid: 0, invalid: 0, error: 0, timeout: 0 };
  for (const c of checks) outcomes[c.reason] = (outcomes[c.reason] ?? 0) + 1;
  const total = isObj(summary) ? num(summary.total) : null;
  if (total !== null) outcomes.missing = Math.max(0, total - checks.length);
  return {
    mode: isObj(summary) ? str(summary.mode) : checks[0]?.mode ?? null,
    total,
    outcomes,
    checks,
  };
}

/** The view of a replay run from its `summary.json` and the labels of its tasks. */
export function replayView(
  summary: unknown,
  labels: Map<string, string>,
  sourceRun: number | null,
): ReplayView {
  const s = isObj(summary) ? summary : {};
  const tasks = (Array.isArray(s.tasks) ? s.tasks : []).filter(isObj).map((t): ReplayTask => {
    const key = str(t.key) ?? String(t.idx);
    const rewards = nums(t.rewards);
    const sourceRewards = nums(t.source_rewards);
    const m = num(t.mean) ?? mean(rewards);
    const sm = mean(sourceRewards);
    return {
      key,
      label: labels.get(key) ?? key,
      rewards,
      mean: m,
      std: num(t.std),
      sourceRewards,
      sourceMean: sm,
      change: m !== null && sm !== null ? m - sm : null,
    };
  });
  return {
    source: str(s.source),
    sourceRun,
    rescores: num(s.rescores),
    skippedSignals: Array.isArray(s.skipped_signals)
      ? s.skipped_signals.filter((x): x is string => typeof x === "string")
      : [],
    tasks,
  };
}

/** The source run folder a replay's `summary.json` names, when it is still there. */
export function replaySource(dir: string, summary: unknown): string | null {
  const source = isObj(summary) ? str(summary.source) : null;
  if (source === null) return null;
  const abs = resolve(dir, source);
  try {
    return statSync(abs).isDirectory() ? abs : null;
  } catch {
    return null;
  }
}
