/**
 * A loopback OpenAI-compatible chat completions server that misbehaves on request: each
 * request is answered with the fault its script picks (by the request body and index),
 * the way real providers and proxies fail.
 *
 * ```ts
 * const fake = await startFaultServer({ pick: (body) => promptOf(body).includes("x") ? "500" : "ok" });
 * // point a client at fake.url (it includes /v1); fake.requests counts what arrived
 * await fake.close();
 * ```
 *
 * Valid answers (`ok`, `big`) follow the request: JSON for `stream` absent or false, SSE
 * chunks ending in `data: [DONE]` for `stream: true`. `bash_env` is a good answer too: a
 * `bash` tool call running `env` (also into `$VF_ENV_DUMP`) when the request offers tools and none ran yet. Like the real API it refuses a request
 * without a bearer token (401) or with a body that is not a chat completion request (400).
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Socket } from "node:net";

/** The faults the server can play. */
export const FAULTS = [
  "ok",
  "429",
  "500",
  "503",
  "reset_before_headers",
  "reset_after_headers",
  "stall",
  "stall_mid_body",
  "malformed_json",
  "malformed_sse",
  "truncated_sse",
  "no_done",
  "empty_choices",
  "big",
  "big_garbage",
  "key_echo_401",
  "stream_unasked",
  "bash_env",
] as const;

/** One fault name. */
export type Fault = typeof FAULTS[number];

/** Options of {@link startFaultServer}. */
export interface FaultServerOptions {
  /** Picks the fault of one request. */
  // deno-lint-ignore no-explicit-any
  pick(body: Record<string, any>, index: number): Fault;
  /** `Retry-After` seconds sent with 429 and 503. @default 0 */
  retryAfterS?: number;
  /** Reply text of valid answers. @default "ok" */
  content?: string;
}

/** A running fault server. */
export interface FaultServer {
  /** Base URL including `/v1`. */
  url: string;
  /** Requests that arrived, in order: the fault played and the bearer token seen. */
  requests: { fault: Fault; token: string; stream: boolean }[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

/** The text of the last user message of a request body. */
export function promptOf(body: Json): string {
  const messages = Array.isArray(body.messages) ? body.messages as Json[] : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) {
      return m.content.map((p: Json) => typeof p?.text === "string" ? p.text : "").join("");
    }
  }
  return "";
}

function completion(model: string, content: string, choices = true): Json {
  return {
    id: "chatcmpl-fault",
    object: "chat.completion",
    created: 1_700_000_000,
    model,
    choices: choices
      ? [{
        index: 0,
        message: { role: "assistant", content, refusal: null },
        logprobs: null,
        finish_reason: "stop",
      }]
      : [],
    usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
  };
}

function chunk(model: string, delta: Json, finish: string | null = null): string {
  return `data: ${
    JSON.stringify({
      id: "chatcmpl-fault",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    })
  }\n\n`;
}

function sseHead(res: http.ServerResponse): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
}

function errorBody(message: string, type: string, code: string | null = null): string {
  return JSON.stringify({ error: { message, type, param: null, code } });
}

/** Starts the server on 127.0.0.1 (OS-chosen port). */
export async function startFaultServer(options: FaultServerOptions): Promise<FaultServer> {
  const requests: FaultServer["requests"] = [];
  const sockets = new Set<Socket>();
  const content = options.content ?? "ok";

  const answer = (req: http.IncomingMessage, res: http.ServerResponse, text: string) => {
    const auth = req.headers["authorization"];
    const token = typeof auth === "string" ? /^Bearer (.+)$/.exec(auth)?.[1] : undefined;
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      res.writeHead(404, { "content-type": "application/json" });
      return res.end(
        errorBody(`Unknown request URL: ${req.method} ${path}.`, "invalid_request_error"),
      );
    }
    if (!token) {
      res.writeHead(401, { "content-type": "application/json" });
      return res.end(errorBody("You didn't provide an API key.", "invalid_request_error"));
    }
    let body: Json;
    try {
      body = JSON.parse(text);
      if (typeof body.model !== "string" || !Array.isArray(body.messages)) throw new Error();
    } catch {
      res.writeHead(400, { "content-type": "application/json" });
      return res.end(errorBody("Invalid chat completion request.", "invalid_request_error"));
    }
    const stream = body.stream === true;
    const fault = options.pick(body, requests.length);
    requests.push({ fault, token, stream });
    const model = body.model as string;
    const json = (status: number, value: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(value);
    };
    const valid = (text: string) => {
      if (!stream) return json(200, JSON.stringify(completion(model, text)));
      sseHead(res);
      res.write(chunk(model, { role: "assistant", content: "" }));
      res.write(chunk(model, { content: text }));
      res.write(chunk(model, {}, "stop"));
      res.end("data: [DONE]\n\n");
    };
    const retryAfter = String(options.retryAfterS ?? 0);
    switch (fault) {
      case "ok":
        return valid(content);
      case "big":
        return valid("x".repeat(10 * 1024 * 1024));
      case "429":
        return json(
          429,
          errorBody("Rate limit reached for requests", "requests", "rate_limit_exceeded"),
          { "retry-after": retryAfter },
        );
      case "500":
        return json(500, errorBody("The server had an error", "server_error"));
      case "503":
        return json(503, errorBody("The engine is currently overloaded", "server_error"), {
          "retry-after": retryAfter,
        });
      case "reset_before_headers":
        return req.socket.destroy();
      case "reset_after_headers":
        if (stream) {
          sseHead(res);
          res.write(chunk(model, { role: "assistant", content: "" }));
        } else {
          res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
          res.write('{"id": "chatcmpl-fault", "choices": [');
        }
        return setTimeout(() => req.socket.destroy(), 20);
      case "stall":
        return; // never answers: the socket stays open until the client gives up
      case "stall_mid_body":
        if (stream) {
          sseHead(res);
          res.write(chunk(model, { role: "assistant", content: "" }));
        } else {
          res.writeHead(200, { "content-type": "application/json", "content-length": "4096" });
          res.write('{"id": "chatcmpl-fault", "choices": [');
        }
        return;
      case "malformed_json":
        return json(200, '{"id": "chatcmpl-fault", "choices": [{"index": 0, "message": {');
      case "malformed_sse":
        if (!stream) return json(200, "<html>502 Bad Gateway</html>");
        sseHead(res);
        res.write(chunk(model, { role: "assistant", content: "" }));
        res.write('data: {"id": "chatcmpl-fault", "choices": [{"delta": {"content": "o\n\n');
        res.write(chunk(model, {}, "stop"));
        return res.end("data: [DONE]\n\n");
      case "truncated_sse":
        if (!stream) return json(200, JSON.stringify(completion(model, content)).slice(0, 40));
        sseHead(res);
        res.write(chunk(model, { role: "assistant", content: "" }));
        return res.end(chunk(model, { content }).slice(0, 30));
      case "no_done":
        if (!stream) return json(200, JSON.stringify(completion(model, content, false)));
        sseHead(res);
        res.write(chunk(model, { role: "assistant", content: "" }));
        res.write(chunk(model, { content }));
        return res.end(chunk(model, {}, "stop"));
      case "empty_choices":
        if (!stream) return json(200, JSON.stringify(completion(model, content, false)));
        sseHead(res);
        return res.end(
          "data: " + JSON.stringify({ id: "x", choices: [] }) + "\n\ndata: [DONE]\n\n",
        );
      case "big_garbage":
        return json(200, "y".repeat(10 * 1024 * 1024));
      case "key_echo_401":
        return json(
          401,
          errorBody(
            `Incorrect API key provided: ${token}. You can find your API key at https://x.invalid.`,
            "invalid_request_error",
            "invalid_api_key",
          ),
        );
      case "bash_env": {
        const offered = Array.isArray(body.tools) && body.tools.length > 0;
        const ran = (body.messages as Json[]).some((m) => m.role === "tool");
        if (!offered || ran || stream) return valid(content);
        const message = {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "call_env",
            type: "function",
            function: {
              name: "bash",
              arguments: JSON.stringify({ command: 'env > "${VF_ENV_DUMP:-/dev/null}"; env' }),
            },
          }],
        };
        return json(
          200,
          JSON.stringify({
            ...completion(model, content),
            choices: [{ index: 0, message, logprobs: null, finish_reason: "tool_calls" }],
          }),
        );
      }
      case "stream_unasked":
        sseHead(res);
        res.write(chunk(model, { role: "assistant", content: "" }));
        res.write(chunk(model, { content }));
        res.write(chunk(model, {}, "stop"));
        return res.end("data: [DONE]\n\n");
    }
  };

  const server = http.createServer((req, res) => {
    res.on("error", () => {});
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => answer(req, res, text));
  });
  // Idle connections stay open for the whole test, as a hosted API's do for a minute or
  // more: with the 5 s default, a connection idle through a 4 s stall timeout could close
  // just as the client reuses it for a retry, a race the faults under test do not include.
  server.keepAliveTimeout = 120_000;
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
