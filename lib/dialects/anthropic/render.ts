/**
 * Rendering an answer as Anthropic Messages: the JSON `Message` and its stream of events
 * (`message_start`, `ping`, each block's `content_block_start`, deltas in small pieces and
 * `content_block_stop`, `message_delta` with the stop reason and usage, `message_stop`).
 * The oracle answers with these.
 *
 * @module
 */
import type { Message, Usage } from "../../../kit/trace/types.ts";
import { isRecord } from "../../../kit/util/is_record.ts";
import type { DialectOutcome, RenderMeta } from "../../../kit/wire/dialect.ts";
import { nativeStopReason } from "./codec.ts";

/** Characters per streamed text, thinking or input piece. */
const CHUNK_CHARS = 16;

/** Usage in Anthropic's shape (what the trace counts as prompt tokens is `input_tokens`). */
function anthropicUsage(usage: Usage | null): Record<string, unknown> {
  if (usage === null) return { input_tokens: 0, output_tokens: 0 };
  return {
    input_tokens: usage.prompt_tokens,
    cache_creation_input_tokens: 0,
    ...(usage.cached_input_tokens !== null
      ? { cache_read_input_tokens: usage.cached_input_tokens }
      : {}),
    output_tokens: usage.completion_tokens,
    ...(usage.reasoning_tokens !== null
      ? { output_tokens_details: { thinking_tokens: usage.reasoning_tokens } }
      : {}),
    ...(usage.cost !== null ? { cost: usage.cost } : {}),
  };
}

/** A tool call's arguments as the `input` object (anything else becomes `{}`). */
function inputOf(args: string): Record<string, unknown> {
  try {
    const input: unknown = JSON.parse(args);
    return isRecord(input) ? input : {};
  } catch {
    return {};
  }
}

/** The content blocks of an answer: thinking, then text, then tool uses. */
function blocksOf(message: Message): Record<string, unknown>[] {
  if (message.role !== "assistant") return [];
  const blocks: Record<string, unknown>[] = [];
  if (Array.isArray(message.provider_state)) {
    for (const b of message.provider_state) if (isRecord(b)) blocks.push(structuredClone(b));
  } else if (typeof message.reasoning_content === "string" && message.reasoning_content) {
    blocks.push({ type: "thinking", thinking: message.reasoning_content, signature: "" });
  }
  if (typeof message.content === "string" && message.content !== "") {
    blocks.push({ type: "text", text: message.content });
  }
  for (const call of message.tool_calls ?? []) {
    blocks.push({ type: "tool_use", id: call.id, name: call.name, input: inputOf(call.arguments) });
  }
  return blocks;
}

/** The JSON `Message` carrying `outcome`. */
export function renderMessage(outcome: DialectOutcome, meta: RenderMeta): unknown {
  return {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content: blocksOf(outcome.message),
    stop_reason: nativeStopReason(outcome.finishReason),
    stop_sequence: null,
    usage: anthropicUsage(outcome.usage),
  };
}

function sse(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += CHUNK_CHARS) out.push(text.slice(i, i + CHUNK_CHARS));
  return out;
}

/** The events of one block: its start (fields emptied), its deltas, its stop. */
function blockEvents(index: number, block: Record<string, unknown>): string[] {
  const events: string[] = [];
  const delta = (d: Record<string, unknown>) =>
    events.push(sse("content_block_delta", { index, delta: d }));
  switch (block.type) {
    case "text":
      events.push(sse("content_block_start", { index, content_block: { type: "text", text: "" } }));
      for (const text of pieces(String(block.text))) delta({ type: "text_delta", text });
      break;
    case "thinking": {
      const start = { ...block, thinking: "", signature: "" };
      events.push(sse("content_block_start", { index, content_block: start }));
      for (const thinking of pieces(String(block.thinking ?? ""))) {
        delta({ type: "thinking_delta", thinking });
      }
      if (typeof block.signature === "string" && block.signature !== "") {
        delta({ type: "signature_delta", signature: block.signature });
      }
      break;
    }
    case "tool_use": {
      const start = { ...block, input: {} };
      events.push(sse("content_block_start", { index, content_block: start }));
      for (const partial_json of pieces(JSON.stringify(block.input ?? {}))) {
        delta({ type: "input_json_delta", partial_json });
      }
      break;
    }
    default:
      events.push(sse("content_block_start", { index, content_block: block }));
  }
  events.push(sse("content_block_stop", { index }));
  return events;
}

/** The stream of `outcome`: each string one whole SSE event, `message_stop` last. */
export function renderMessageStream(outcome: DialectOutcome, meta: RenderMeta): string[] {
  const usage = anthropicUsage(outcome.usage);
  const head = {
    id: meta.id,
    type: "message",
    role: "assistant",
    model: meta.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { ...usage, output_tokens: 0 },
  };
  const events = [sse("message_start", { message: head }), sse("ping", {})];
  blocksOf(outcome.message).forEach((block, index) => events.push(...blockEvents(index, block)));
  events.push(
    sse("message_delta", {
      delta: { stop_reason: nativeStopReason(outcome.finishReason), stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    }),
    sse("message_stop", {}),
  );
  return events;
}
