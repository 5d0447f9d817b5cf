/**
 * Minting an empty trace for one rollout of one task.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import type { TaskData } from "../tasks/task_data.ts";
import type { Trace, TraceTask } from "../trace/types.ts";
import { taskHash } from "../tasks/hash.ts";
import { VERSION } from "../version.ts";

/** The identity of a task as traces and episodes carry it. */
export function traceTask(type: string, data: TaskData, key?: string): TraceTask {
  const hash = taskHash(data);
  return { type, data: structuredClone(data) as Record<string, unknown>, key: key ?? hash, hash };
}

/** A fresh trace with every field present, as Python serializes an unfinished one. */
export function newTrace(
  task: TraceTask,
  agentConfig: Record<string, unknown>,
  runtimeType: string,
): Trace {
  const span = () => ({ start: null, end: null });
  return {
    version: 1,
    id: randomUUID().replaceAll("-", ""),
    verifiers: { version: VERSION, commit: null },
    task,
    agent: {
      config: agentConfig,
      runtime: { type: runtimeType, id: null, borrowed: false },
      name: "agent",
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
      start: null,
      boot: span(),
      setup: span(),
      agent: { start: null, end: null, model: { duration: 0 }, harness: { duration: 0 } },
      finalize: span(),
      scoring: span(),
    },
  };
}
