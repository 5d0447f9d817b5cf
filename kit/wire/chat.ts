/**
 * The OpenAI chat completions wire format, written once: message, tool call and request
 * shapes, the error body and its reader, and the conversion of trace messages into chat
 * messages. The interception server, the oracle, the judges and the host-side agent loop
 * all speak it through this module.
 *
 * @module
 */
import type { ContentPart, Message } from "../trace/types.ts";
import { isRecord } from "../util/is_record.ts";

/** The chat completions path under a `/v1` base URL (also `ModelCall.endpoint`). */
export const CHAT_COMPLETIONS_PATH = "/chat/completions";

/** A tool call as the chat API sends it. */
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A chat message as the chat API sends it (provider-specific fields are kept). */
export interface ChatMessage {
  role: string;
  content?: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[] | null;
  tool_call_id?: string;
  reasoning_content?: string | null;
  [field: string]: unknown;
}

/** A chat completions request body (unknown fields kept). */
export interface ChatRequestBody {
  model?: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: Record<string, unknown> | null;
  tools?: unknown[];
  [field: string]: unknown;
}

/** The OpenAI error body: `{error: {message, type, param, code}}`. */
export interface ChatErrorBody {
  error: { message: string; type: string; param: null; code: string | null };
}

/** Builds an OpenAI error body. */
export function openAIErrorBody(
  message: string,
  type = "invalid_request_error",
  code: string | null = null,
): ChatErrorBody {
  return { error: { message, type, param: null, code } };
}

/**
 * The message of an error body: `error.message`, a string `error`, or a top-level
 * `message`; else the text itself, trimmed and cut at `maxChars`.
 */
export function errorMessageOf(text: string, maxChars = 1000): string {
  try {
    const json: unknown = JSON.parse(text);
    if (isRecord(json)) {
      if (isRecord(json.error) && typeof json.error.message === "string") {
        return json.error.message;
      }
      if (typeof json.error === "string") return json.error;
      if (typeof json.message === "string") return json.message;
    }
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.trim().slice(0, maxChars);
}

/** Converts trace messages into chat messages a chat API accepts. */
export function toChatMessages(messages: readonly Message[]): ChatMessage[] {
  return messages.map((m): ChatMessage => {
    switch (m.role) {
      case "assistant": {
        const out: ChatMessage = { role: "assistant", content: m.content ?? null };
        if (m.tool_calls && m.tool_calls.length > 0) {
          out.tool_calls = m.tool_calls.map((c): ChatToolCall => ({
            id: c.id,
            type: "function",
            function: { name: c.name, arguments: c.arguments },
          }));
        }
        if (typeof m.reasoning_content === "string") out.reasoning_content = m.reasoning_content;
        return out;
      }
      case "tool":
        return { role: "tool", tool_call_id: m.tool_call_id, content: m.content };
      default:
        return { role: m.role, content: m.content };
    }
  });
}
