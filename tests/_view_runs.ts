/**
 * Run directories for the run viewer's tests and benchmark: episodes in our trace format
 * (a bash tool call and its result, model calls with usage and timing, rewards, judge
 * records, errors of several types) and in the shape Python `verifiers` v1 writes
 * (`Episode.to_record()` at verifiers/v1/episode.py@a60a606: `exclude_none`, errors of
 * model calls as objects, no `task.key`, extra fields).
 *
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Episode, Trace } from "../kit/trace/types.ts";
import { traceWithMessages } from "./_trace_helpers.ts";

/** Options of one synthetic episode. */
export interface FakeEpisodeOptions {
  /** Task number (key `bench:task-<n>`). */
  task: number;
  reward: number;
  /** An error type to record (the episode is then not ok). */
  error?: { type: string; message: string } | null;
  /** Extra characters of tool output, to make lines realistically long. */
  padding?: number;
  /** Epoch seconds of the start. */
  start?: number;
}

/** One episode in our format. */
export function fakeEpisode(o: FakeEpisodeOptions): Episode {
  const start = o.start ?? 1_780_000_000 + o.task;
  const prompt = `Task ${o.task}: print the number ${o.task} squared.`;
  const trace: Trace = traceWithMessages([
    { role: "system", content: "You are working in a Linux shell." },
    { role: "user", content: prompt },
    {
      role: "assistant",
      content: null,
      tool_calls: [{
        id: `call_${o.task}`,
        name: "bash",
        arguments: `{"command":"echo $((${o.task}*${o.task}))"}`,
      }],
    },
    {
      role: "tool",
      tool_call_id: `call_${o.task}`,
      content: `${o.task * o.task}\n${"x".repeat(o.padding ?? 0)}`,
    },
    { role: "assistant", content: `The answer is ${o.task * o.task}.` },
  ]);
  const task = {
    type: "bench",
    data: { idx: o.task, name: `task-${o.task}`, prompt },
    key: `bench:task-${o.task}`,
    hash: o.task.toString(16).padStart(64, "0"),
  };
  trace.task = task;
  trace.calls = [2, 4].map((node, i) => ({
    node,
    model: "fake-model",
    sampling: { temperature: 0 },
    endpoint: "chat",
    finish_reason: i === 0 ? "tool_calls" : "stop",
    usage: {
      prompt_tokens: 120 + 40 * i,
      completion_tokens: 20,
      cached_input_tokens: 0,
      reasoning_tokens: 0,
      cost: null,
    },
    time: { start: start + i, end: start + i + 0.4 },
    error: null,
  }));
  trace.rewards = { correct: { score: o.reward, weight: 1 } };
  trace.metrics = { turns: 2 };
  trace.info = {
    judge: [{
      judge: "reference",
      model: "judge-model",
      text: "yes",
      parsed: true,
      usage: { prompt_tokens: 50, completion_tokens: 1 },
      time: { start: start + 2, end: start + 2.2 },
    }],
  };
  trace.extra_usage = [{
    prompt_tokens: 50,
    completion_tokens: 1,
    cached_input_tokens: 0,
    reasoning_tokens: 0,
    cost: null,
    source: "judge:reference",
    model: "judge-model",
  }];
  trace.timing = {
    start,
    boot: { start, end: start + 0.1 },
    setup: { start: start + 0.1, end: start + 0.2 },
    agent: {
      start: start + 0.2,
      end: start + 2,
      model: { duration: 0.8 },
      harness: { duration: 1 },
    },
    finalize: { start: start + 2, end: start + 2 },
    scoring: { start: start + 2, end: start + 2.3 },
  };
  const errors = o.error ? [{ ...o.error, status_code: null, traceback: null }] : [];
  trace.errors = errors;
  trace.ok = !o.error;
  trace.stop_condition = o.error ? "error" : "agent_completed";
  return {
    id: `ep${String(o.task).padStart(6, "0")}${o.reward}`,
    env: { id: "bench", name: "bench" },
    task,
    group: null,
    run: { type: "eval", id: "run0", name: "bench-run" },
    ok: !o.error,
    errors,
    traces: [trace],
  };
}

/** An episode as Python verifiers v1 writes it (see the module doc). */
export function pythonEpisode(task: number, reward: number): Record<string, unknown> {
  const start = 1_780_000_000 + task;
  return {
    id: `py${task}`,
    env: { id: "py-env" },
    task: {
      type: "TaskData",
      data: { prompt: [{ role: "user", content: `py question ${task}` }], answer: "4" },
      hash: `pyhash${task}`,
    },
    run: { type: "eval", id: "pyrun" },
    ok: true,
    errors: [],
    traces: [{
      version: 1,
      id: `pytrace${task}`,
      verifiers: { version: "0.2.0" },
      task: { type: "TaskData", data: { answer: "4" }, hash: `pyhash${task}` },
      agent: { config: { model: "py-model" }, name: "agent", trainable: true },
      tools: [],
      nodes: [
        {
          parent: null,
          message: { role: "user", content: [{ type: "text", text: `py question ${task}` }] },
          sampled: false,
          timestamp: start,
        },
        {
          parent: 0,
          message: { role: "assistant", content: "4" },
          sampled: true,
          timestamp: start + 1,
        },
      ],
      calls: [
        {
          node: 1,
          model: "py-model",
          finish_reason: "stop",
          usage: { prompt_tokens: 10, completion_tokens: 1 },
          time: { start, end: start + 0.5 },
          policy: { code: "ok", paths: [] },
        },
        {
          model: "py-model",
          time: { start, end: start + 0.1 },
          error: { type: "ProviderError", message: "upstream 502 then retried" },
        },
      ],
      request_rewrites: [],
      response_rewrites: [],
      rewards: { exact: { score: reward, weight: 1 } },
      metrics: {},
      info: {},
      extra_usage: [{ prompt_tokens: 5, completion_tokens: 1 }],
      is_completed: true,
      ok: true,
      stop_condition: "no_tool_calls",
      errors: [],
      timing: {
        start,
        boot: { start: 0, end: 0 },
        setup: { start: 0, end: 0 },
        agent: { start, end: start + 1, model: { duration: 0.5 }, harness: { duration: 0 } },
        finalize: { start: 0, end: 0 },
        scoring: { start: start + 1, end: start + 1.1 },
      },
      some_future_field: { nested: true },
    }],
  };
}

/** Writes a run directory with `episodes` as traces.jsonl (and optional summary/config). */
export function writeRunDir(
  dir: string,
  episodes: unknown[],
  extra: { summary?: unknown; config?: unknown } = {},
): string {
  mkdirSync(join(dir, "configs"), { recursive: true });
  writeFileSync(join(dir, "traces.jsonl"), episodes.map((e) => JSON.stringify(e) + "\n").join(""));
  if (extra.summary !== undefined) {
    writeFileSync(join(dir, "summary.json"), JSON.stringify(extra.summary));
  }
  if (extra.config !== undefined) {
    writeFileSync(join(dir, "configs", "eval.json"), JSON.stringify(extra.config));
  }
  return dir;
}

/** `n` episodes over `tasks` tasks: rewards 0/1, every 7th episode errored (3 types). */
export function mixedEpisodes(n: number, tasks: number, padding = 0): Episode[] {
  const types = ["ProviderError", "HarnessError", "TaskError"] as const;
  return Array.from({ length: n }, (_, i) => {
    const task = i % tasks;
    const type = types[i % 3] ?? "TaskError";
    const error = i % 7 === 3
      ? { type, message: `${type} in episode ${i % 2 ? "odd" : "even"}: boom` }
      : null;
    return fakeEpisode({
      task,
      reward: (task + Math.floor(i / tasks)) % 3 === 0 ? 0 : 1,
      error,
      padding,
    });
  });
}
