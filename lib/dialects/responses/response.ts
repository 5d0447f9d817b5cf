/**
 * Reading an OpenAI Responses object in the trace's terms: its `output` items folded into
 * one assistant message (text, reasoning summaries and content, function calls; the items
 * kept as `provider_state`), usage with disjoint prompt and cached buckets, and the finish
 * reason as verifiers/v1/dialects/responses.py@a60a606 derives it: `length` when the
 * response is incomplete, else `tool_calls` when it calls a tool, else `stop`.
 *
 * @module
 */
import type { Message, ToolCall, Usage } from "../../../kit/trace/types.ts";
import { isRecord } from "../../../kit/util/is_record.ts";
import type { DialectOutcome } from "../../../kit/wire/dialect.ts";
import { reasoningText, toolCallOf } from "./request.ts";

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function optionalCount(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/**
 * A Responses `usage` object: `input_tokens` includes cache hits, which the trace keeps
 * apart; cached and reasoning tokens come from the `*_details` objects. Null when absent.
 */
export function parseResponsesUsage(raw: unknown): Usage | null {
  if (!isRecord(raw)) return null;
  const input = isRecord(raw.input_tokens_details) ? raw.input_tokens_details : {};
  const output = isRecord(raw.output_tokens_details) ? raw.output_tokens_details : {};
  const cached = optionalCount(input.cached_tokens);
  return {
    prompt_tokens: Math.max(0, count(raw.input_tokens) - (cached ?? 0)),
    completion_tokens: count(raw.output_tokens),
    cached_input_tokens: cached,
    reasoning_tokens: optionalCount(output.reasoning_tokens),
    cost: optionalCount(raw.cost),
  };
}

/**
 * Why a Responses object is not an answer (`<status>: <code>: <message>` of a failed or
 * cancelled one), or null when its status is completed, incomplete or absent.
 */
export function responseFailure(response: Record<string, unknown>): string | null {
  const status = response.status;
  if (status === undefined || status === null || status === "completed") return null;
  if (status === "incomplete") return null;
  const error = isRecord(response.error) ? response.error : {};
  return [status, error.code, error.message]
    .filter((v) => v !== undefined && v !== null && v !== "")
    .map(String)
    .join(": ");
}

/** The output items of a Responses object as one outcome. */
export function outcomeOfResponse(response: Record<string, unknown>): DialectOutcome {
  const items = Array.isArray(response.output) ? response.output : [];
  let content = "";
  const reasoning: string[] = [];
  const calls: ToolCall[] = [];
  for (const item of items) {
    if (!isRecord(item)) continue;
    if (item.type === "message" && Array.isArray(item.content)) {
      for (const p of item.content) {
        if (isRecord(p) && p.type === "output_text" && typeof p.text === "string") {
          content += p.text;
        }
      }
    } else if (item.type === "reasoning") reasoningText(item, reasoning);
    else if (item.type === "function_call" || item.type === "custom_tool_call") {
      calls.push(toolCallOf(item));
    }
  }
  const message: Message = { role: "assistant", content: content || null };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join("\n");
  if (calls.length > 0) message.tool_calls = calls;
  // the items as they came: the graph keeps a copy (lib/interception/graph.ts), and a
  // harness in this process may be handed the parsed body as its own
  message.provider_state = items;
  return {
    message,
    finishReason: response.status === "incomplete"
      ? "length"
      : calls.length > 0
      ? "tool_calls"
      : "stop",
    usage: parseResponsesUsage(response.usage),
  };
}

/** Why a provider's JSON answer carries none (the wording of verifiers' Responses dialect). */
export function unansweredResponse(json: unknown): string {
  if (!isRecord(json) || !Array.isArray(json.output)) {
    return "malformed upstream response: the provider's answer is no Responses object";
  }
  return `upstream Responses request did not complete: ${responseFailure(json)}`;
}

/** Reads a provider's JSON answer; null when it is no Responses object or did not complete. */
export function parseResponsesBody(json: unknown): DialectOutcome | null {
  if (!isRecord(json) || !Array.isArray(json.output)) return null;
  if (responseFailure(json) !== null) return null;
  return outcomeOfResponse(json);
}
