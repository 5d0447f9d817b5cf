/**
 * The OpenAI Responses side of the benchmark mock (bench/mock_server.ts): `POST
 * /v1/responses` with a bearer token and a body with `model` and `input` (a string or an
 * array of items); the answer as a response object, or streamed as `response.created`,
 * `response.in_progress`, one message item (`output_item.added`, `content_part.added`, a
 * `response.output_text.delta` per delta, `output_text.done`, `content_part.done`,
 * `output_item.done`) and `response.completed` carrying the whole response. Written by
 * hand, sharing no codec of the project.
 *
 * @module
 */
import type http from "node:http";
import { paceEvents } from "./mock_pacing.ts";

function error(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      error: { message, type: "invalid_request_error", param: null, code: null },
    }),
  );
}

/** The text of the last item of a Responses `input` (a string, or an item's text parts). */
export function lastInputText(input: unknown): string {
  if (typeof input === "string") return input;
  const last = Array.isArray(input) ? input.at(-1) : undefined;
  const content = last?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => typeof p?.text === "string" ? p.text : "").join("");
}

/** A request's body when it is a valid Responses request; else answers the error and null. */
export function checkResponsesRequest(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  text: string,
): { model: string; input: unknown; stream?: unknown } | null {
  if (!/^Bearer .+/.test(req.headers.authorization ?? "")) {
    error(res, 401, "You didn't provide an API key.");
    return null;
  }
  let body: { model?: unknown; input?: unknown; stream?: unknown };
  try {
    body = JSON.parse(text);
  } catch {
    error(res, 400, "We could not parse the JSON body of your request.");
    return null;
  }
  if (typeof body.model !== "string") {
    error(res, 400, "Missing required parameter: 'model'.");
    return null;
  }
  if (typeof body.input !== "string" && !Array.isArray(body.input)) {
    error(res, 400, "Missing required parameter: 'input'.");
    return null;
  }
  return body as { model: string; input: unknown; stream?: unknown };
}

/** Answers a checked Responses request with `deltas` as its text (streamed when asked). */
export function sendResponses(
  res: http.ServerResponse,
  id: string,
  model: string,
  deltas: string[],
  stream: boolean,
): void {
  const item = (text: string, status: string) => ({
    id: `msg_${id}`,
    type: "message",
    status,
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }],
  });
  const text = deltas.join("");
  const response = (status: string, output: unknown[]) => ({
    id,
    object: "response",
    created_at: 1700000000,
    status,
    model,
    output,
    usage: status === "completed"
      ? {
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: deltas.length,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 20 + deltas.length,
      }
      : null,
  });
  if (!stream) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(response("completed", [item(text, "completed")])));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  let sequence = 0;
  const sse = (type: string, data: Record<string, unknown>) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`;
  const at = { output_index: 0, item_id: `msg_${id}` };
  const events = [
    sse("response.created", { response: response("in_progress", []) }),
    sse("response.in_progress", { response: response("in_progress", []) }),
    sse("response.output_item.added", { output_index: 0, item: item("", "in_progress") }),
    sse("response.content_part.added", {
      ...at,
      content_index: 0,
      part: { type: "output_text", text: "", annotations: [] },
    }),
    ...deltas.map((delta) => sse("response.output_text.delta", { ...at, content_index: 0, delta })),
    sse("response.output_text.done", { ...at, content_index: 0, text }),
    sse("response.content_part.done", {
      ...at,
      content_index: 0,
      part: { type: "output_text", text, annotations: [] },
    }),
    sse("response.output_item.done", { output_index: 0, item: item(text, "completed") }),
    sse("response.completed", { response: response("completed", [item(text, "completed")]) }),
  ];
  let next = 0;
  paceEvents(res, () => events[next++] ?? null);
}
