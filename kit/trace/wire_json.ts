/**
 * One `traces.jsonl` line with Python's number typing where `TaskData` declares floats:
 * `task.data.timeout.*` and `task.data.resources.{cpu,memory,disk}` are written as Python
 * writes a float (`5.0`, not `5`), so Python's `task_key(task.data)` of the line equals the
 * recorded `task.hash` (verifiers/v1/task.py@a60a606).
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { pythonFloatRepr } from "../tasks/hash.ts";
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

function floatHolders(value: unknown): Map<object, readonly string[]> {
  const holders = new Map<object, readonly string[]>();
  const addTask = (task: unknown) => {
    if (!isRecord(task) || !isRecord(task.data)) return;
    for (const [section, fields] of Object.entries(FLOAT_FIELDS)) {
      const holder = task.data[section];
      if (isRecord(holder)) holders.set(holder, fields);
    }
  };
  if (isRecord(value)) {
    addTask(value.task);
    if (Array.isArray(value.traces)) {
      for (const t of value.traces) if (isRecord(t)) addTask(t.task);
    }
  }
  return holders;
}

/** The JSON text of an episode (or any value) for `traces.jsonl`. */
export function episodeJson(value: unknown): string {
  const holders = floatHolders(value);
  if (holders.size === 0) return JSON.stringify(value);
  let marked = false;
  const text = JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
    const fields = holders.get(this as object);
    if (fields && fields.includes(key) && typeof v === "number" && Number.isFinite(v)) {
      marked = true;
      return MARK + pythonFloatRepr(v);
    }
    return v;
  });
  return marked ? text.replace(MARKED, "$1") : text;
}
