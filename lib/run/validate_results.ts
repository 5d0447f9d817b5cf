/**
 * The files of a `vf validate` run, as Python v1 writes them (`verifiers/v1/cli/validate.py`
 * at a60a606): `results.jsonl`, one row per task check (sorted keys, compact), and
 * `summary.json` (outcome counts, rewritten after every row). A resume keeps the final rows
 * (`valid`/`invalid` of the same mode) of the selected tasks and owes the rest.
 *
 * @module
 */
import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeOutputAtomic } from "./config_dump.ts";

/** Python's results file of a validate run. */
export const RESULTS_FILE = "results.jsonl";
/** Python's summary file of a validate run. */
export const SUMMARY_FILE = "summary.json";

/** What a check runs: both (`all`), the gold check (setup + validate), or setup alone. */
export type ValidateMode = "all" | "gold" | "setup";
/** How a check ended. */
export type ValidateReason = "valid" | "invalid" | "error" | "timeout";
const REASONS: readonly ValidateReason[] = ["valid", "invalid", "error", "timeout"];

/** One row of `results.jsonl`. */
export interface ValidateRow {
  index: number | null;
  name: string | null;
  mode: ValidateMode;
  valid: boolean;
  reason: ValidateReason;
  elapsed: number;
  error: string | null;
  error_type: string | null;
  /** Mode `all`: the two checks. */
  gold?: ValidateRow;
  setup?: ValidateRow;
  task_position?: number;
  task_key?: string;
}

/** A copy of a JSON value with every object's keys sorted. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).filter(([, v]) => v !== undefined);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([k, v]) => [k, sortKeys(v)]));
}

/** A row written as Python writes it: sorted keys, no spaces. */
function rowLine(row: ValidateRow): string {
  return JSON.stringify(sortKeys(row)) + "\n";
}

function isFinal(row: unknown, key: string, mode: ValidateMode): row is ValidateRow {
  if (typeof row !== "object" || row === null) return false;
  const r = row as ValidateRow;
  return r.task_key === key && r.mode === mode &&
    (r.reason === "valid" || r.reason === "invalid") &&
    r.valid === (r.reason === "valid");
}

/** Appends one row and syncs it to disk (a kill loses at most a torn last line). */
export function appendRow(runDir: string, row: ValidateRow): void {
  const path = join(runDir, RESULTS_FILE);
  appendFileSync(path, rowLine(row));
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * A resume's rows: the final rows of the selected task keys (as many per key as positions
 * with that key, in position order), the file rewritten with only those, and the
 * positions still owed.
 */
export function loadResults(
  runDir: string,
  keys: readonly string[],
  mode: ValidateMode,
): { rows: ValidateRow[]; owed: Set<number> } {
  const path = join(runDir, RESULTS_FILE);
  const good = new Map<string, ValidateRow[]>();
  const wanted = new Map<string, number>();
  for (const k of keys) wanted.set(k, (wanted.get(k) ?? 0) + 1);
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue; // a torn line: that task is owed
    }
    const key = (row as { task_key?: unknown })?.task_key;
    if (typeof key !== "string" || !isFinal(row, key, mode)) continue;
    const list = good.get(key) ?? [];
    if (list.length < (wanted.get(key) ?? 0)) good.set(key, [...list, row]);
  }
  const rows: ValidateRow[] = [];
  const owed = new Set<number>();
  const used = new Map<string, number>();
  keys.forEach((key, position) => {
    const i = used.get(key) ?? 0;
    const row = good.get(key)?.[i];
    if (row) {
      used.set(key, i + 1);
      rows.push({ ...row, task_position: position });
    } else owed.add(position);
  });
  writeOutputAtomic(path, rows.map(rowLine).join(""));
  return { rows, owed };
}

/** The summary of `rows` out of `total` tasks (Python's `summarize`). */
export function summarize(
  rows: readonly ValidateRow[],
  total: number,
  mode: ValidateMode,
): Record<string, unknown> {
  const count = (of: readonly (ValidateRow | undefined)[]) => {
    const c = { valid: 0, invalid: 0, error: 0, timeout: 0 };
    for (const r of REASONS) c[r] = of.filter((row) => row?.reason === r).length;
    return c;
  };
  const missing = Math.max(0, total - rows.length);
  const outcomes = { ...count(rows), missing };
  const summary: Record<string, unknown> = {
    mode,
    total,
    recorded: rows.length,
    terminal: outcomes.valid + outcomes.invalid,
    owed: missing + outcomes.error + outcomes.timeout,
    outcomes,
    valid_rate: total ? Math.round((outcomes.valid / total) * 1e6) / 1e6 : null,
  };
  if (mode === "all") {
    summary.checks = {
      gold: { ...count(rows.map((r) => r.gold)), missing },
      setup: { ...count(rows.map((r) => r.setup)), missing },
    };
  }
  return summary;
}

/** Writes `summary.json` atomically (indented, sorted keys, as Python does). */
export function writeValidateSummary(runDir: string, summary: Record<string, unknown>): void {
  writeOutputAtomic(join(runDir, SUMMARY_FILE), sortedJson(summary) + "\n");
}

/** JSON with sorted keys, indented by 2 (Python's `json.dumps(indent=2, sort_keys=True)`). */
export function sortedJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2);
}
