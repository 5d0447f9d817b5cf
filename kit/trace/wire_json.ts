/**
 * One `traces.jsonl` line with Python's number typing where `TaskData` declares floats:
 * `task.data.timeout.*` and `task.data.resources.{cpu,memory,disk}` are written as Python
 * writes a float (`5.0`, not `5`), so Python's `task_key(task.data)` of the line equals the
 * recorded `task.hash` (verifiers/v1/task.py@a60a606).
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { pythonFloatRepr } from "../util/python_float.ts";
import { isRecord } from "../util/is_record.ts";

const FLOAT_FIELDS: Record<string, readonly string[]> = {
  timeout: ["setup", "agent", "finalize", "scoring"],
  resources: ["cpu", "memory", "disk"],
};

/** A marker no real string value carries (a per-process nonce behind a control character). */
const MARK = `\u0001pyfloat-${randomBytes(6).toString("hex")}:`;
const MARKED = new RegExp(
  `"${JSON.stringify(MARK).slice(1, -1).replace(/\\/g, "\\\\")}([^"]+)"`,
  "g",
);

/**
 * `value` with each float field of its task data (and of its traces' task data) replaced
 * by a marked string of Python's float text; only the objects on the way are copied
 * (key order kept), so the JSON text needs no replacer function, which would be called
 * for every key of the episode.
 */
function markFloats(value: Record<string, unknown>): { marked: unknown; any: boolean } {
  const copies = new Map<object, Record<string, unknown>>();
  let any = false;
  const markTask = (task: unknown): unknown => {
    if (!isRecord(task) || !isRecord(task.data)) return task;
    let data: Record<string, unknown> | null = null;
    for (const [section, fields] of Object.entries(FLOAT_FIELDS)) {
      const holder = task.data[section];
      if (!isRecord(holder)) continue;
      let copy = copies.get(holder);
      if (copy === undefined) {
        copy = { ...holder };
        for (const field of fields) {
          const v = copy[field];
          if (typeof v === "number" && Number.isFinite(v)) {
            copy[field] = MARK + pythonFloatRepr(v);
            any = true;
          }
        }
        copies.set(holder, copy);
      }
      data ??= { ...task.data };
      data[section] = copy;
    }
    return data === null ? task : { ...task, data };
  };
  const marked: Record<string, unknown> = { ...value, task: markTask(value.task) };
  if (Array.isArray(value.traces)) {
    marked.traces = value.traces.map((t) => isRecord(t) ? { ...t, task: markTask(t.task) } : t);
  }
  return { marked, any };
}

/** True when `task.data` holds a finite number in a float field (one to write as a float). */
function hasFloatField(task: unknown): boolean {
  if (!isRecord(task) || !isRecord(task.data)) return false;
  for (const section in FLOAT_FIELDS) {
    const holder = task.data[section];
    if (!isRecord(holder)) continue;
    for (const field of FLOAT_FIELDS[section]!) {
      const v = holder[field];
      if (typeof v === "number" && Number.isFinite(v)) return true;
    }
  }
  return false;
}

/** True when `value` or one of its traces has task data with a float field to mark. */
function needsMarking(value: Record<string, unknown>): boolean {
  if (hasFloatField(value.task)) return true;
  if (!Array.isArray(value.traces)) return false;
  for (const t of value.traces) if (isRecord(t) && hasFloatField(t.task)) return true;
  return false;
}

/**
 * The JSON text of an episode (or any value) for `traces.jsonl`. Most tasks set no
 * timeout or resources, so their episodes are written as they are, without the copies.
 */
export function episodeJson(value: unknown): string {
  if (!isRecord(value) || !needsMarking(value)) return JSON.stringify(value);
  const { marked, any } = markFloats(value);
  const text = JSON.stringify(any ? marked : value);
  return any ? text.replace(MARKED, "$1") : text;
}
