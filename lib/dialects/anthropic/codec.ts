/**
 * Reading Anthropic Messages in the trace's terms, as Python v1 reads them
 * (verifiers/v1/dialects/anthropic.py@a60a606): the top-level `system` and the `messages`
 * into trace {@link Message}s (an assistant turn's blocks folded into one message: `text`
 * into content, `thinking` into reasoning, `tool_use` into tool calls, the thinking blocks
 * kept as `provider_state`; a user turn's `tool_result` blocks each a tool message), a
 * `Message` answer, usage (three disjoint input buckets), stop reasons, tool specs, and
 * the run's model and sampling imposed in this API's shape.
 *
 * @module
 */
import type { ContentPart, Message, ToolCall, ToolSpec, Usage } from "../../../kit/trace/types.ts";
import { isRecord } from "../../../kit/util/is_record.ts";
import type { DialectOutcome, TraceFinishReason } from "../../../kit/wire/dialect.ts";

/** Anthropic's `stop_reason` as the trace records it; any other is null. */
const STOP_REASONS: Readonly<Record<string, TraceFinishReason>> = {
  end_turn: "stop",
  max_tokens: "length",
  tool_use: "tool_calls",
  stop_sequence: "stop",
};

/** A trace finish reason as Anthropic says it (for answers this server renders). */
const NATIVE_STOP_REASONS: Readonly<Record<string, string>> = {
  stop: "end_turn",
  length: "max_tokens",
  tool_calls: "tool_use",
};

/** Request keys recorded in `ModelCall.sampling` (the call settings; a whitelist). */
const SAMPLING_KEYS: readonly string[] = [
  "temperature",
  "top_p",
  "top_k",
  "max_tokens",
  "stop_sequences",
  "thinking",
  "tool_choice",
  "output_config",
];

/** The thinking block types, in the order `provider_state` keeps them. */
const THINKING = ["redacted_thinking", "thinking"];

/** The value when it is a string, else null. */
export function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

function optionalNum(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** A stop reason as the trace records it. */
export function normalizeStopReason(reason: string | null): TraceFinishReason | null {
  return reason !== null && Object.hasOwn(STOP_REASONS, reason) ? STOP_REASONS[reason]! : null;
}

/** A finish reason in Anthropic's words: a trace reason mapped, a native one kept. */
export function nativeStopReason(reason: string | null): string | null {
  if (reason === null) return null;
  return Object.hasOwn(NATIVE_STOP_REASONS, reason) ? NATIVE_STOP_REASONS[reason]! : reason;
}

/** User-side content (a string, or text and image blocks) as trace content. */
export function parseContent(content: unknown): string | ContentPart[] {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return [];
  if (content.length === 1 && isRecord(content[0]) && content[0].type === "text") {
    return str(content[0].text) ?? "";
  }
  const parts: ContentPart[] = [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === "text") parts.push({ type: "text", text: str(block.text) ?? "" });
    else if (block.type === "image") {
      const source = isRecord(block.source) ? block.source : {};
      const url = source.type === "url"
        ? str(source.url) ?? ""
        : `data:${str(source.media_type) ?? ""};base64,${str(source.data) ?? ""}`;
      parts.push({ type: "image_url", image_url: { url } });
    }
  }
  return parts;
}

/** An assistant turn's content blocks folded into one trace message. */
export function assistantFromBlocks(blocks: readonly unknown[]): Message {
  const text: string[] = [];
  const reasoning: string[] = [];
  const calls: ToolCall[] = [];
  const state: Record<string, unknown>[] = [];
  for (const block of blocks) {
    if (!isRecord(block)) continue;
    switch (block.type) {
      case "text":
        text.push(str(block.text) ?? "");
        break;
      case "thinking":
        reasoning.push(str(block.thinking) ?? "");
        state.push(structuredClone(block));
        break;
      case "redacted_thinking":
        state.push(structuredClone(block));
        break;
      case "tool_use":
        calls.push({
          id: str(block.id) ?? "",
          name: str(block.name) ?? "",
          // the input as JSON text; a streamed input that was no JSON, as it came
          arguments: typeof block.input === "string"
            ? block.input
            : JSON.stringify(isRecord(block.input) ? block.input : {}),
        });
    }
  }
  // a stable sort: the provider may reorder mixed thinking types when a turn is replayed
  state.sort((a, b) => THINKING.indexOf(a.type as string) - THINKING.indexOf(b.type as string));
  const joined = text.join("");
  const message: Message = { role: "assistant", content: joined === "" ? null : joined };
  const thought = reasoning.join("");
  if (thought !== "") message.reasoning_content = thought;
  if (calls.length > 0) message.tool_calls = calls;
  if (state.length > 0) message.provider_state = state;
  return message;
}

/** A request's `system` and `messages` as trace messages. */
export function parseMessages(body: Record<string, unknown>, messages: unknown[]): Message[] {
  const out: Message[] = [];
  const system = body.system;
  if (system !== undefined && system !== null && system !== "" && !isEmptyList(system)) {
    out.push({ role: "system", content: parseContent(system) });
  }
  for (const raw of messages) {
    const message = isRecord(raw) ? raw : {};
    const content = message.content;
    if (message.role === "assistant") {
      const blocks = typeof content === "string"
        ? [{ type: "text", text: content }]
        : Array.isArray(content)
        ? content
        : [];
      out.push(assistantFromBlocks(blocks));
      continue;
    }
    const rest: unknown[] = [];
    for (const block of Array.isArray(content) ? content : []) {
      if (isRecord(block) && block.type === "tool_result") {
        out.push({
          role: "tool",
          tool_call_id: str(block.tool_use_id) ?? "",
          content: parseContent(block.content),
        });
      } else rest.push(block);
    }
    if (typeof content === "string") out.push({ role: "user", content });
    else if (rest.length > 0) out.push({ role: "user", content: parseContent(rest) });
  }
  return out;
}

function isEmptyList(value: unknown): boolean {
  return Array.isArray(value) && value.length === 0;
}

/** The client-side tools of a request (server tools, which carry no schema, are skipped). */
export function toolSpecs(tools: unknown[]): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const tool of tools) {
    if (!isRecord(tool) || !isRecord(tool.input_schema)) continue;
    const name = str(tool.name);
    if (name === null) continue;
    out.push({
      name,
      description: str(tool.description) ?? "",
      parameters: tool.input_schema,
      strict: typeof tool.strict === "boolean" ? tool.strict : null,
    });
  }
  return out;
}

/**
 * Anthropic usage in the trace's terms. Its three input buckets are disjoint: cache writes
 * are uncached work and count as prompt tokens, cache reads are the cached ones.
 */
export function parseUsage(raw: unknown): Usage | null {
  if (!isRecord(raw)) return null;
  const details = isRecord(raw.output_tokens_details) ? raw.output_tokens_details : {};
  return {
    prompt_tokens: (optionalNum(raw.input_tokens) ?? 0) +
      (optionalNum(raw.cache_creation_input_tokens) ?? 0),
    completion_tokens: optionalNum(raw.output_tokens) ?? 0,
    cached_input_tokens: optionalNum(raw.cache_read_input_tokens),
    reasoning_tokens: optionalNum(details.thinking_tokens),
    cost: optionalNum(raw.cost),
  };
}

/** Reads a `Message` answer; null when the body is none. */
export function outcomeFromMessage(json: unknown): DialectOutcome | null {
  if (!isRecord(json) || !Array.isArray(json.content)) return null;
  if (json.type !== undefined && json.type !== "message") return null;
  return {
    message: assistantFromBlocks(json.content),
    finishReason: str(json.stop_reason),
    usage: parseUsage(json.usage),
  };
}

/**
 * The body sent upstream: the program's, the run's model over it; `temperature` and
 * `top_p` are the run's (the program's dropped); `max_tokens`, which the API requires, is
 * the program's unless the run sets one; the run's reasoning effort goes to
 * `output_config.effort`. Returns a new object.
 */
export function applyOverrides(
  body: Record<string, unknown>,
  model: string,
  sampling: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (key !== "temperature" && key !== "top_p") out[key] = body[key];
  }
  out.model = model;
  for (const key of ["temperature", "top_p", "max_tokens"]) {
    const value = sampling[key];
    if (value !== null && value !== undefined) out[key] = value;
  }
  const effort = sampling.reasoning_effort;
  if (effort !== null && effort !== undefined) {
    out.output_config = { ...(isRecord(body.output_config) ? body.output_config : {}), effort };
  }
  return out;
}

/** The settings recorded for a call, from the body sent: effort lifted to `reasoning_effort`. */
export function recordedSampling(sent: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SAMPLING_KEYS) {
    if (sent[key] !== undefined) out[key] = sent[key];
  }
  if (isRecord(out.output_config)) {
    const { effort, ...rest } = out.output_config;
    if (effort !== undefined && effort !== null && effort !== "") {
      out.reasoning_effort = effort;
      if (Object.keys(rest).length > 0) out.output_config = rest;
      else delete out.output_config;
    }
  }
  return out;
}

/** Anthropic's error `type` for a status (https://docs.anthropic.com/en/api/errors). */
function errorType(status: number | undefined, type: string, code: string | null): string {
  if (code === "invalid_api_key" || status === 401) return "authentication_error";
  switch (status) {
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 529:
      return "overloaded_error";
  }
  if (status !== undefined && status >= 500) return "api_error";
  return type === "server_error" || type === "provider_error" ? "api_error" : type;
}

/** An error body in Anthropic's shape: `{type: "error", error: {type, message}}`. */
export function anthropicErrorBody(
  message: string,
  type = "invalid_request_error",
  code: string | null = null,
  status?: number,
): { type: "error"; error: { type: string; message: string } } {
  return { type: "error", error: { type: errorType(status, type, code), message } };
}
