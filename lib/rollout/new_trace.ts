/**
 * Minting an empty trace for one rollout of one task, in the shape Python `verifiers` v1
 * gives a fresh `Trace` (verifiers/v1/trace.py@a60a606).
 *
 * @module
 */
import { createHash, randomUUID } from "node:crypto";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { Trace, TraceTask } from "../../kit/trace/types.ts";
import { canonicalTaskData, PyFloat, pythonJsonDumps } from "../../kit/tasks/hash.ts";
import { wireRuntimeType } from "../../kit/runtime/wire.ts";
import { VERSION } from "../../kit/version.ts";

/**
 * What traces record as the producing build. `version` is what Python's own source tree
 * reports without package metadata (`verifiers/__init__.py@a60a606`), so no Python release
 * is claimed; `producer` names this tool (Python ignores the extra field).
 */
const PRODUCER_BUILD = {
  version: "0.0.0+unknown",
  commit: null,
  producer: `verifiers-ts ${VERSION}`,
} as const;

function plainJson(value: unknown): unknown {
  if (value instanceof PyFloat) return value.value;
  if (Array.isArray(value)) return value.map(plainJson);
  if (value !== null && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(obj)) out[k] = plainJson(obj[k]); // no [key, value] pair per key
    return out;
  }
  return value;
}

/**
 * Task data as the trace carries it: exactly the dict that is hashed (`TaskData` defaults
 * filled in, nulls dropped), so Python's `task_key(task.data) == task.hash`.
 */
export function wireTaskData(data: TaskData): Record<string, unknown> {
  return plainJson(canonicalTaskData(data)) as Record<string, unknown>;
}

/**
 * The Task class name Python records as `task.type` for a taskset: the plugin's own
 * `taskType`, else its id in PascalCase plus `Task` (`reverse-text` -> `ReverseTextTask`,
 * the class of Python's `reverse_text` environment).
 */
export function taskTypeName(taskset: { id: string; taskType?: string }): string {
  if (taskset.taskType) return taskset.taskType;
  const words = taskset.id.split(/[^A-Za-z0-9]+/).filter((w) => w !== "");
  const name = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
  return `${/^[A-Za-z]/.test(name) ? name : `T${name}`}Task`;
}

/** The identity of a task as traces and episodes carry it. */
export function traceTask(type: string, data: TaskData, key?: string): TraceTask {
  // the canonical dict is built once: hashed as Python dumps it, carried as plain JSON
  const canonical = canonicalTaskData(data as Record<string, unknown>);
  const hash = createHash("sha256").update(pythonJsonDumps(canonical), "utf8").digest("hex");
  return { type, data: plainJson(canonical) as Record<string, unknown>, key: key ?? hash, hash };
}

/** A fresh trace with every field present, as Python serializes an unfinished one. */
export function newTrace(
  task: TraceTask,
  agentConfig: Record<string, unknown>,
  runtimeType: string,
  name = "agent",
): Trace {
  const span = () => ({ start: 0, end: 0 });
  return {
    version: 1,
    id: randomUUID().replaceAll("-", ""),
    verifiers: { ...PRODUCER_BUILD },
    task,
    agent: {
      config: agentConfig,
      runtime: { type: wireRuntimeType(runtimeType), id: null, borrowed: false },
      name,
      trainable: true,
    },
    tools: [],
    nodes: [],
    calls: [],
    request_rewrites: [],
    response_rewrites: [],
    rewards: {},
    metrics: {},
    info: {},
    extra_usage: [],
    is_completed: false,
    ok: true,
    stop_condition: null,
    errors: [],
    timing: {
      start: Date.now() / 1000,
      boot: span(),
      setup: span(),
      agent: { start: 0, end: 0, model: { duration: 0 }, harness: { duration: 0 } },
      finalize: span(),
      scoring: span(),
    },
  };
}
