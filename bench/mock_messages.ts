/**
 * The Anthropic Messages side of the benchmark mock (bench/mock_server.ts): `POST
 * /v1/messages` with an `x-api-key` and an `anthropic-version`, a body with `model`,
 * `max_tokens` and `messages` (each refused as the API refuses it); the answer as a JSON
 * message, or streamed as `message_start`, one text block (`content_block_start`, a
 * `content_block_delta` per delta, `content_block_stop`), `message_delta` and
 * `message_stop`. Written by hand, sharing no codec of the project.
 *
 * @module
 */
import type http from "node:http";
import { paceEvents } from "./mock_pacing.ts";

/** An Anthropic error body. */
function error(res: http.ServerResponse, status: number, type: string, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify({ type: "error", error: { type, message } }));
}

/** The text of a Messages message's content (a string or text blocks). */
export function messagesText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => typeof b?.text === "string" ? b.text : "").join("");
}

/** A request's body when it is a valid Messages request; else answers the error and null. */
export function checkMessagesRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  text: string,
): { model: string; messages: { content?: unknown }[]; stream?: unknown } | null {
  if (!req.headers["x-api-key"]) {
    error(res, 401, "authentication_error", "x-api-key header is required");
    return null;
  }
  if (!req.headers["anthropic-version"]) {
    error(res, 400, "invalid_request_error", "anthropic-version header is required");
    return null;
  }
  let body: { model?: unknown; max_tokens?: unknown; messages?: unknown; stream?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    error(res, 400, "invalid_request_error", "There was an error parsing the body");
    return null;
  }
  if (typeof body.model !== "string") {
    error(res, 400, "invalid_request_error", "model: Field required");
    return null;
  }
  if (typeof body.max_tokens !== "number") {
    error(res, 400, "invalid_request_error", "max_tokens: Field required");
    return null;
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    error(res, 400, "invalid_request_error", "messages: Field required");
    return null;
  }
  return body as { model: string; messages: { content?: unknown }[]; stream?: unknown };
}

function sse(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** Answers a checked Messages request with `deltas` as its text (streamed when asked). */
export function sendMessages(
  res: http.ServerResponse,
  id: string,
  model: string,
  deltas: string[],
  stream: boolean,
): void {
  const usage = { input_tokens: 20, output_tokens: deltas.length };
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({
      id,
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "text", text: deltas.join("") }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage,
    }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const events = [
    sse("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 20, output_tokens: 1 },
      },
    }),
    sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    ...deltas.map((text) =>
      sse("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      })
    ),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: deltas.length },
    }),
    sse("message_stop", { type: "message_stop" }),
  ];
  let at = 0;
  paceEvents(res, () => events[at++] ?? null);
}
