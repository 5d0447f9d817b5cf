/**
 * A scripted, strict Anthropic Messages server on 127.0.0.1 for tests. It writes its own
 * JSON and server-sent events (no production codec), and rejects what Anthropic's API
 * rejects, in its error shape (`{type: "error", error: {type, message}}`): a missing or
 * wrong `x-api-key` (a bearer token is not its auth) 401, no `anthropic-version` header
 * 400, a body that is not a JSON object, no `model`, no integer `max_tokens` >= 1 (on
 * `/v1/messages`), empty or malformed `messages` (roles, a first turn that is not the
 * user's, a `tool_result` answering no `tool_use` of the turn before), a non-boolean
 * `stream`, `temperature`/`top_p` outside [0, 1], a client tool without `input_schema`.
 *
 * ```ts
 * const fake = await startFakeAnthropic({ apiKey: "sk-ant-x", script: () => ({ text: "hi" }) });
 * // fake.url is the root (no /v1); fake.requests holds each validated request
 * ```
 *
 * `POST /v1/messages/count_tokens` answers `{input_tokens}` (a length estimate); its
 * requests are in `countRequests`.
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

type Json = Record<string, unknown>;

/** What the fake answers to one Messages request. */
export interface AnthropicReply {
  text?: string;
  thinking?: { thinking: string; signature: string };
  tool_use?: { id: string; name: string; input: Json }[];
  /** @default "tool_use" with tool uses, else "end_turn" */
  stop_reason?: string;
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_creation_input_tokens?: number;
    cache_read_input_tokens?: number;
  };
  /** An error reply: its status and Anthropic error type (e.g. 529 `overloaded_error`). */
  error?: { status: number; type: string; message: string };
  /** Close the connection without an answer. */
  drop?: boolean;
  /** Streams only: an `error` event after `message_start`, then the end (overloaded mid-stream). */
  streamError?: { type: string; message: string };
}

/** A validated request. */
export interface AnthropicRequest {
  index: number;
  path: string;
  headers: Record<string, string>;
  body: Json;
}

/** Options of {@link startFakeAnthropic}. */
export interface FakeAnthropicOptions {
  /** The `x-api-key` it takes. */
  apiKey: string;
  script: (body: Json, index: number) => AnthropicReply;
}

/** A running fake. */
export interface FakeAnthropic {
  /** The root URL, e.g. `http://127.0.0.1:1234` (the API is under `/v1`). */
  url: string;
  requests: AnthropicRequest[];
  countRequests: AnthropicRequest[];
  close(): Promise<void>;
}

class Refusal extends Error {
  readonly status: number;
  readonly type: string;
  constructor(status: number, message: string, type = "invalid_request_error") {
    super(message);
    this.status = status;
    this.type = type;
  }
}

const isObject = (v: unknown): v is Json =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function blocksOf(content: unknown): Json[] {
  if (typeof content === "string") return [];
  if (!Array.isArray(content)) throw new Refusal(400, "content: Input should be a valid list");
  return content.map((b, i) => {
    if (!isObject(b) || typeof b.type !== "string") {
      throw new Refusal(400, `content.${i}: Input should be a valid content block`);
    }
    return b;
  });
}

function checkMessages(messages: unknown): void {
  if (!Array.isArray(messages)) throw new Refusal(400, "messages: Field required");
  if (messages.length === 0) throw new Refusal(400, "messages: at least one message is required");
  let lastToolUses = new Set<string>();
  messages.forEach((m, i) => {
    if (!isObject(m) || (m.role !== "user" && m.role !== "assistant")) {
      throw new Refusal(400, `messages.${i}.role: Input should be 'user' or 'assistant'`);
    }
    if (i === 0 && m.role !== "user") {
      throw new Refusal(400, 'messages: first message must use the "user" role');
    }
    if (typeof m.content !== "string" && !Array.isArray(m.content)) {
      throw new Refusal(400, `messages.${i}.content: Field required`);
    }
    const blocks = blocksOf(m.content);
    if (m.role === "user") {
      for (const b of blocks.filter((b) => b.type === "tool_result")) {
        if (!lastToolUses.has(String(b.tool_use_id))) {
          throw new Refusal(
            400,
            `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ` +
              `${String(b.tool_use_id)}. Each \`tool_result\` block must have a corresponding ` +
              "`tool_use` block in the previous message.",
          );
        }
      }
    }
    lastToolUses = new Set(
      m.role === "assistant"
        ? blocks.filter((b) => b.type === "tool_use").map((b) => String(b.id))
        : [],
    );
  });
}

function checkBody(path: string, body: unknown): Json {
  if (!isObject(body)) throw new Refusal(400, "The request body must be a JSON object");
  if (typeof body.model !== "string" || body.model === "") {
    throw new Refusal(400, "model: Field required");
  }
  if (path === "/v1/messages") {
    const max = body.max_tokens;
    if (max === undefined) throw new Refusal(400, "max_tokens: Field required");
    if (!Number.isInteger(max) || (max as number) < 1) {
      throw new Refusal(400, "max_tokens: Input should be a valid integer greater than 0");
    }
    if (body.stream !== undefined && typeof body.stream !== "boolean") {
      throw new Refusal(400, "stream: Input should be a valid boolean");
    }
  }
  for (const key of ["temperature", "top_p"]) {
    const v = body[key];
    if (v !== undefined && (typeof v !== "number" || v < 0 || v > 1)) {
      throw new Refusal(400, `${key}: Input should be less than or equal to 1`);
    }
  }
  checkMessages(body.messages);
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) throw new Refusal(400, "tools: Input should be a valid list");
    body.tools.forEach((t, i) => {
      const custom = isObject(t) && (t.type === undefined || t.type === "custom");
      if (!isObject(t) || typeof t.name !== "string" || (custom && !isObject(t.input_schema))) {
        throw new Refusal(400, `tools.${i}.custom.input_schema: Field required`);
      }
    });
  }
  return body;
}

function usageOf(reply: AnthropicReply, body: Json): Json {
  return {
    input_tokens: reply.usage?.input_tokens ?? Math.ceil(JSON.stringify(body.messages).length / 4),
    cache_creation_input_tokens: reply.usage?.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: reply.usage?.cache_read_input_tokens ?? 0,
    output_tokens: reply.usage?.output_tokens ?? 7,
  };
}

function contentOf(reply: AnthropicReply): Json[] {
  const content: Json[] = [];
  if (reply.thinking) content.push({ type: "thinking", ...reply.thinking });
  if (reply.text !== undefined) content.push({ type: "text", text: reply.text });
  for (const t of reply.tool_use ?? []) content.push({ type: "tool_use", ...t });
  return content;
}

/** Writes the answer as Anthropic streams it. */
function writeStream(
  res: http.ServerResponse,
  message: Json,
  error?: { type: string; message: string },
): void {
  const send = (type: string, data: Json) =>
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const usage = message.usage as Json;
  send("message_start", {
    message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } },
  });
  send("ping", {});
  if (error) {
    send("error", { error });
    return void res.end();
  }
  (message.content as Json[]).forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      const text = String(block.text);
      for (let i = 0; i < text.length; i += 5) {
        send("content_block_delta", {
          index,
          delta: { type: "text_delta", text: text.slice(i, i + 5) },
        });
      }
    } else if (block.type === "thinking") {
      send("content_block_start", { index, content_block: { type: "thinking", thinking: "" } });
      send("content_block_delta", {
        index,
        delta: { type: "thinking_delta", thinking: block.thinking },
      });
      send("content_block_delta", {
        index,
        delta: { type: "signature_delta", signature: block.signature },
      });
    } else {
      send("content_block_start", { index, content_block: { ...block, input: {} } });
      const json = JSON.stringify(block.input);
      const half = Math.floor(json.length / 2);
      for (const partial_json of [json.slice(0, half), json.slice(half)]) {
        send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
      }
    }
    send("content_block_stop", { index });
  });
  send("message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send("message_stop", {});
  res.end();
}

/** Starts the fake on 127.0.0.1 (OS-chosen port). */
export async function startFakeAnthropic(options: FakeAnthropicOptions): Promise<FakeAnthropic> {
  const requests: AnthropicRequest[] = [];
  const countRequests: AnthropicRequest[] = [];
  let ids = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const fail = (err: Refusal) => {
        res.writeHead(err.status, { "content-type": "application/json", "request-id": "req_f" });
        res.end(JSON.stringify({ type: "error", error: { type: err.type, message: err.message } }));
      };
      try {
        const path = req.url ?? "";
        if (
          req.method !== "POST" || !["/v1/messages", "/v1/messages/count_tokens"].includes(path)
        ) {
          throw new Refusal(404, `Not Found: ${req.method} ${path}`, "not_found_error");
        }
        if (req.headers["x-api-key"] !== options.apiKey) {
          throw new Refusal(401, "invalid x-api-key", "authentication_error");
        }
        if (typeof req.headers["anthropic-version"] !== "string") {
          throw new Refusal(400, "anthropic-version: header is required");
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          throw new Refusal(400, "There was an issue with your request body: invalid JSON");
        }
        const body = checkBody(path, parsed);
        const headers = req.headers as Record<string, string>;
        if (path.endsWith("/count_tokens")) {
          countRequests.push({ index: countRequests.length, path, headers, body });
          res.writeHead(200, { "content-type": "application/json" });
          return res.end(
            JSON.stringify({ input_tokens: Math.ceil(JSON.stringify(body).length / 4) }),
          );
        }
        const index = requests.length;
        requests.push({ index, path, headers, body });
        const reply = options.script(body, index);
        if (reply.drop) return req.socket.destroy();
        if (reply.error) {
          res.setHeader("retry-after-ms", "20");
          throw new Refusal(reply.error.status, reply.error.message, reply.error.type);
        }
        const content = contentOf(reply);
        const message = {
          id: `msg_fake_${++ids}`,
          type: "message",
          role: "assistant",
          model: body.model,
          content,
          stop_reason: reply.stop_reason ??
            (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn"),
          stop_sequence: null,
          usage: usageOf(reply, body),
        };
        if (body.stream === true) return writeStream(res, message, reply.streamError);
        res.writeHead(200, { "content-type": "application/json", "request-id": "req_f" });
        res.end(JSON.stringify(message));
      } catch (err) {
        if (err instanceof Refusal) return fail(err);
        fail(new Refusal(500, `fake failure: ${(err as Error).message}`, "api_error"));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    countRequests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
