/**
 * The trace format, field for field as Python `verifiers` v1 serializes it
 * (`Episode`, `Trace`, `MessageNode`, `ModelCall`), so both tools read each other's
 * `traces.jsonl`.
 *
 * @module
 */
import type { TraceErrorRecord } from "../errors.ts";

/** A text or image part of a multi-part message content. */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

/** A tool call as stored in a trace (arguments are the raw JSON text). */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One chat message in the trace's own (provider-neutral) shape. */
export type Message =
  | { role: "system"; content: string | ContentPart[] }
  | { role: "user"; content: string | ContentPart[] }
  | {
    role: "assistant";
    content: string | null;
    reasoning_content?: string | null;
    tool_calls?: ToolCall[] | null;
    provider_state?: unknown;
  }
  | { role: "tool"; tool_call_id: string; content: string | ContentPart[]; name?: string | null };

/** A node of the message graph: a message plus the node it follows. */
export interface MessageNode {
  parent: number | null;
  message: Message;
  /** True only for model output. */
  sampled: boolean;
  /** Epoch seconds. */
  timestamp: number;
}

/** Token usage of one model call. */
export interface Usage {
  /** Prompt tokens excluding cached ones. */
  prompt_tokens: number;
  completion_tokens: number;
  /** Null when the provider did not report it. */
  cached_input_tokens: number | null;
  /** Null when the provider did not report it. */
  reasoning_tokens: number | null;
  cost: number | null;
}

/** A `{start, end}` span in epoch seconds; 0.0 when the stage never ran (Python `TimeSpan`). */
export interface Span {
  start: number;
  end: number;
}

/** One provider exchange, recorded by the interception server. */
export interface ModelCall {
  /** Index of the assistant node this call committed, null when it failed. */
  node: number | null;
  model: string;
  /** The call settings actually sent (whitelisted per dialect). */
  sampling: Record<string, unknown>;
  endpoint: string;
  /** Normalized as Python does: any other provider reason is null. */
  finish_reason: "stop" | "length" | "tool_calls" | null;
  /** The provider's own finish reason when it is not one of the three (Python ignores it). */
  native_finish_reason?: string;
  usage: Usage | null;
  time: Span;
  /** The failure that ended this call (Python `Error`). */
  error: TraceErrorRecord | null;
  /**
   * Set on a call the agent made on its own (e.g. `session_title`), named by its harness:
   * recorded, but not a turn, not the conversation's end, and its failure fails nothing.
   */
  auxiliary?: string;
}

/** A tool advertised by the harness, as recorded on `trace.tools`. */
export interface ToolSpec {
  name: string;
  description: string | null;
  parameters: Record<string, unknown> | null;
  strict: boolean | null;
}

/** Task identity inside a trace or episode. */
export interface TraceTask {
  type: string;
  data: Record<string, unknown>;
  key: string;
  hash: string;
}

/** A weighted reward value; null when the reward was expected but not produced. */
export interface RewardValue {
  score: number;
  weight: number;
}

/** Per-phase timing of a trace. */
export interface TraceTiming {
  start: number;
  boot: Span;
  setup: Span;
  agent: Span & { model: { duration: number }; harness: { duration: number } };
  finalize: Span;
  scoring: Span;
}

/** Usage of a judge or other out-of-band call, added to `extra_usage`. */
export interface ExtraUsage extends Usage {
  source: string;
  model: string;
}

/** The record of one agent's rollout on one task. */
export interface Trace {
  version: 1;
  id: string;
  /** Python reads `{version, commit}`; `producer` names the tool that wrote the trace. */
  verifiers: { version: string; commit: string | null; producer?: string };
  task: TraceTask;
  agent: {
    config: Record<string, unknown>;
    runtime: { type: string; id: string | null; borrowed: boolean };
    name: string;
    trainable: boolean;
  };
  tools: ToolSpec[];
  nodes: MessageNode[];
  calls: ModelCall[];
  request_rewrites: { handler: string }[];
  response_rewrites: { handler: string }[];
  rewards: Record<string, RewardValue | null>;
  metrics: Record<string, number | null>;
  info: Record<string, unknown>;
  extra_usage: ExtraUsage[];
  is_completed: boolean;
  ok: boolean;
  stop_condition: string | null;
  errors: TraceErrorRecord[];
  timing: TraceTiming;
}

/** One line of `traces.jsonl`: what one env run on one task produced. */
export interface Episode {
  id: string;
  env: { id: string; name: string };
  task: TraceTask;
  group: string | null;
  run: { type: "eval"; id: string; name: string };
  ok: boolean;
  errors: TraceErrorRecord[];
  traces: Trace[];
}
