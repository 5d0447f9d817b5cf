/**
 * A scripted, strict OpenAI-compatible chat completions server on 127.0.0.1 for tests.
 *
 * ```ts
 * const fake = await startFakeOpenAI({
 *   script: (body, i) => i === 0
 *     ? { tool_calls: [{ name: "back", arguments: { message: "hi" } }] }
 *     : "done",                       // a string is shorthand for { content }
 * });
 * // point a client at fake.url (it includes /v1), then inspect fake.requests
 * await fake.close();
 * ```
 *
 * It serves only `POST /v1/chat/completions` and rejects what OpenAI rejects (with the
 * OpenAI error shape): a missing bearer token (401), a wrong one when `apiKey` is set,
 * a non-JSON body, a missing `model`, empty or malformed `messages` (roles, tool-call
 * pairing), a non-boolean `stream`, `stream_options` without `stream: true`, malformed
 * `tools`, out-of-range `temperature`/`top_p` and, with `knownParams`, any parameter the chat
 * completions API does not take (as OpenAI's "Unrecognized request argument supplied").
 * `stream: true` answers with SSE chunks
 * (`data: {...}\n\n` ... `data: [DONE]\n\n`) and a usage-only chunk when
 * `stream_options.include_usage` is true.
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

/** A tool call the fake model makes. */
export interface FakeToolCall {
  /** @default `call_<request index>_<position>` */
  id?: string;
  name: string;
  /** A JSON string sent verbatim, or an object serialised. */
  arguments: string | Record<string, unknown>;
}

/** Usage as the OpenAI API reports it; missing counts are estimated. */
export interface FakeUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
}

/** What the fake answers to one request. */
export interface FakeReply {
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: FakeToolCall[];
  /** @default "tool_calls" when there are tool calls, else "stop" */
  finish_reason?: string;
  usage?: FakeUsage;
  /** HTTP status; with `error` (or any status >= 400) the reply is an OpenAI error body. */
  status?: number;
  /** The error message (or `{message, type, code}`) for an error reply. */
  error?: string | { message: string; type?: string; code?: string | null };
  /** Streaming only: after the first delta is flushed, wait for this before the rest. */
  pauseAfterFirstChunk?: Promise<unknown>;
  /**
   * Streaming only: after the deltas, an error chunk with this message in place of the
   * finish chunk (then `data: [DONE]`), as vLLM reports a generation failing mid-stream.
   */
  streamError?: string;
}

/** A validated request the script saw. */
export interface FakeRequest {
  /** Position in `requests` (the script's `index`). */
  index: number;
  path: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  // deno-lint-ignore no-explicit-any
  body: Record<string, any>;
}

/** The script: answers request `index` (0-based). A string is `{content: string}`. */
export type FakeScript = (
  // deno-lint-ignore no-explicit-any
  body: Record<string, any>,
  index: number,
) => FakeReply | string | Promise<FakeReply | string>;

/** Options of {@link startFakeOpenAI}. */
export interface FakeOpenAIOptions {
  /** @default echoes the last user message's text */
  script?: FakeScript;
  /** Delay before each answer. @default 0 */
  latencyMs?: number;
  /** When set, the bearer token must equal it (401 otherwise). */
  apiKey?: string;
  /** Refuse parameters chat completions does not take (400), as OpenAI does. @default false */
  knownParams?: boolean;
}

/** The chat completions request parameters (OpenAI's, and vLLM's `top_k`). */
const CHAT_PARAMS = new Set([
  "model",
  "messages",
  "stream",
  "stream_options",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "temperature",
  "top_p",
  "top_k",
  "max_tokens",
  "max_completion_tokens",
  "stop",
  "seed",
  "n",
  "presence_penalty",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "response_format",
  "user",
  "reasoning_effort",
  "metadata",
  "store",
  "service_tier",
  "modalities",
  "audio",
  "prediction",
  "verbosity",
  "safety_identifier",
  "prompt_cache_key",
]);

/** A running fake. */
export interface FakeOpenAI {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:1234/v1`. */
  url: string;
  /** Every request that passed validation, in arrival order. */
  requests: FakeRequest[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

class Rejection extends Error {
  readonly status: number;
  readonly param: string | null;
  readonly code: string | null;
  readonly type: string;
  constructor(
    status: number,
    message: string,
    param: string | null = null,
    code: string | null = null,
    type = "invalid_request_error",
  ) {
    super(message);
    this.status = status;
    this.param = param;
    this.code = code;
    this.type = type;
  }
}

function isRecord(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : "")).join("");
  }
  return "";
}

/** The default script: echo the last user message. */
function echo(body: Json): FakeReply {
  const messages = body.messages as Json[];
  const last = messages.findLast((m) => m.role === "user");
  return { content: last ? textOf(last.content) : "" };
}

function validateMessages(messages: unknown): void {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new Rejection(400, "'messages' must be a non-empty array of messages", "messages");
  }
  const pending = new Set<string>();
  messages.forEach((m, i) => {
    const param = `messages.[${i}]`;
    if (!isRecord(m)) {
      throw new Rejection(400, `Invalid type for '${param}': expected an object`, param);
    }
    const role = m.role;
    if (role !== "tool" && pending.size > 0) {
      throw new Rejection(
        400,
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.",
        param,
      );
    }
    switch (role) {
      case "system":
      case "developer":
      case "user":
        if (typeof m.content !== "string" && !Array.isArray(m.content)) {
          throw new Rejection(
            400,
            `Missing required parameter: '${param}.content'.`,
            `${param}.content`,
          );
        }
        break;
      case "assistant": {
        const calls = m.tool_calls;
        if (calls !== undefined && calls !== null) {
          if (!Array.isArray(calls)) {
            throw new Rejection(400, `Invalid '${param}.tool_calls'`, `${param}.tool_calls`);
          }
          for (const tc of calls) {
            if (
              !isRecord(tc) || typeof tc.id !== "string" || tc.type !== "function" ||
              !isRecord(tc.function) || typeof tc.function.name !== "string" ||
              typeof tc.function.arguments !== "string"
            ) {
              throw new Rejection(
                400,
                `Invalid tool call in '${param}.tool_calls'`,
                `${param}.tool_calls`,
              );
            }
            pending.add(tc.id);
          }
        }
        const hasCalls = Array.isArray(calls) && calls.length > 0;
        if (!hasCalls && typeof m.content !== "string" && !Array.isArray(m.content)) {
          throw new Rejection(
            400,
            `Missing parameter '${param}.content': an assistant message needs content or tool_calls.`,
            `${param}.content`,
          );
        }
        break;
      }
      case "tool":
        if (typeof m.tool_call_id !== "string" || !pending.has(m.tool_call_id)) {
          throw new Rejection(
            400,
            "Messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
            `${param}.role`,
          );
        }
        pending.delete(m.tool_call_id);
        if (typeof m.content !== "string" && !Array.isArray(m.content)) {
          throw new Rejection(
            400,
            `Missing required parameter: '${param}.content'.`,
            `${param}.content`,
          );
        }
        break;
      default:
        throw new Rejection(
          400,
          `Invalid value for '${param}.role': '${String(role)}'.`,
          `${param}.role`,
        );
    }
  });
  if (pending.size > 0) {
    throw new Rejection(
      400,
      "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'.",
      "messages",
    );
  }
}

function validateBody(body: unknown, knownParams: boolean): Json {
  if (!isRecord(body)) throw new Rejection(400, "The request body must be a JSON object.");
  const unknown = knownParams ? Object.keys(body).find((k) => !CHAT_PARAMS.has(k)) : undefined;
  if (unknown !== undefined) {
    throw new Rejection(400, `Unrecognized request argument supplied: ${unknown}`, unknown);
  }
  if (typeof body.model !== "string" || body.model === "") {
    throw new Rejection(400, "you must provide a model parameter", "model");
  }
  validateMessages(body.messages);
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== "boolean") {
    throw new Rejection(400, "Invalid type for 'stream': expected a boolean.", "stream");
  }
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    throw new Rejection(
      400,
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
      "stream_options",
    );
  }
  const range = (key: string, max: number) => {
    const v = body[key];
    if (v === undefined || v === null) return;
    if (typeof v !== "number" || v < 0 || v > max) {
      throw new Rejection(400, `Invalid '${key}': expected a number between 0 and ${max}.`, key);
    }
  };
  range("temperature", 2);
  range("top_p", 1);
  if (body.tools !== undefined && body.tools !== null) {
    if (!Array.isArray(body.tools)) throw new Rejection(400, "Invalid type for 'tools'", "tools");
    body.tools.forEach((t, i) => {
      if (
        !isRecord(t) || t.type !== "function" || !isRecord(t.function) ||
        typeof t.function.name !== "string"
      ) {
        throw new Rejection(
          400,
          `Invalid 'tools[${i}]': expected a function tool with a name.`,
          `tools[${i}]`,
        );
      }
    });
  }
  return body;
}

function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function usageOf(reply: FakeReply, body: Json, completionText: string): Json {
  const u = reply.usage ?? {};
  const promptText = (body.messages as Json[]).map((m) => textOf(m.content)).join("\n");
  const prompt = u.prompt_tokens ?? estimateTokens(promptText);
  const completion = u.completion_tokens ?? estimateTokens(completionText);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: u.total_tokens ?? prompt + completion,
    prompt_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    completion_tokens_details: {
      reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0,
    },
  };
}

function toolCallsOf(reply: FakeReply, index: number) {
  return (reply.tool_calls ?? []).map((tc, i) => ({
    id: tc.id ?? `call_${index}_${i}`,
    type: "function" as const,
    function: {
      name: tc.name,
      arguments: typeof tc.arguments === "string" ? tc.arguments : JSON.stringify(tc.arguments),
    },
  }));
}

/** Splits text into word-sized pieces (at least one piece). */
function pieces(text: string): string[] {
  const out = text.match(/\S+\s*|\s+/g) ?? [];
  return out.length > 0 ? out : [text];
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function sendRejection(res: http.ServerResponse, r: Rejection): void {
  sendJson(res, r.status, {
    error: { message: r.message, type: r.type, param: r.param, code: r.code },
  });
}

function readAll(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts the fake on 127.0.0.1 (OS-chosen port). */
export async function startFakeOpenAI(options: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const script: FakeScript = options.script ?? ((body) => echo(body));
  const requests: FakeRequest[] = [];
  let created = 1_700_000_000;

  const answer = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "POST" || path !== "/v1/chat/completions") {
      req.resume();
      throw new Rejection(404, `Unknown request URL: ${req.method} ${path}.`, null, "unknown_url");
    }
    const auth = req.headers["authorization"];
    const token = typeof auth === "string" ? /^Bearer (.+)$/.exec(auth)?.[1] : undefined;
    if (!token) {
      req.resume();
      throw new Rejection(401, "You didn't provide an API key.", null, null);
    }
    if (options.apiKey !== undefined && token !== options.apiKey) {
      req.resume();
      throw new Rejection(401, "Incorrect API key provided.", null, "invalid_api_key");
    }
    const type = req.headers["content-type"] ?? "";
    const text = await readAll(req);
    if (!type.includes("application/json")) {
      throw new Rejection(400, "Content-Type must be application/json.");
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new Rejection(400, "We could not parse the JSON body of your request.");
    }
    const body = validateBody(parsed, options.knownParams === true);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
    }
    const index = requests.length;
    requests.push({ index, path, headers, body });
    const raw = await script(body, index);
    const reply: FakeReply = typeof raw === "string" ? { content: raw } : raw;
    if (options.latencyMs) await sleep(options.latencyMs);

    const status = reply.status ?? 200;
    if (reply.error !== undefined || status >= 400) {
      const e = typeof reply.error === "object"
        ? reply.error
        : { message: reply.error ?? `error ${status}` };
      const errorStatus = status >= 400 ? status : 500;
      throw new Rejection(errorStatus, e.message, null, e.code ?? null, e.type ?? "server_error");
    }

    const id = `chatcmpl-fake-${index}`;
    const model = body.model as string;
    const toolCalls = toolCallsOf(reply, index);
    const content = reply.content ?? (toolCalls.length > 0 ? null : "");
    const finish = reply.finish_reason ?? (toolCalls.length > 0 ? "tool_calls" : "stop");
    const completionText = (reply.reasoning_content ?? "") + (content ?? "") +
      toolCalls.map((t) => t.function.arguments).join("");
    const usage = usageOf(reply, body, completionText);
    created += 1;

    if (body.stream !== true) {
      const message: Json = { role: "assistant", content, refusal: null };
      if (reply.reasoning_content !== undefined) {
        message.reasoning_content = reply.reasoning_content;
      }
      if (toolCalls.length > 0) message.tool_calls = toolCalls;
      sendJson(res, status, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        usage,
      });
      return;
    }

    const includeUsage = isRecord(body.stream_options) &&
      body.stream_options.include_usage === true;
    res.writeHead(status, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const chunk = (delta: Json, finishReason: string | null = null) => {
      const c: Json = {
        id,
        object: "chat.completion.chunk",
        created,
        model,
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
      };
      if (includeUsage) c.usage = null;
      res.write(`data: ${JSON.stringify(c)}\n\n`);
    };
    const deltas: Json[] = [{ role: "assistant", content: "" }];
    for (const p of reply.reasoning_content ? pieces(reply.reasoning_content) : []) {
      deltas.push({ reasoning_content: p });
    }
    for (const p of content ? pieces(content) : []) deltas.push({ content: p });
    toolCalls.forEach((tc, i) => {
      deltas.push({
        tool_calls: [{
          index: i,
          id: tc.id,
          type: "function",
          function: { name: tc.function.name, arguments: "" },
        }],
      });
      const args = tc.function.arguments;
      const half = Math.ceil(args.length / 2);
      for (const part of [args.slice(0, half), args.slice(half)]) {
        if (part) deltas.push({ tool_calls: [{ index: i, function: { arguments: part } }] });
      }
    });
    for (const [i, delta] of deltas.entries()) {
      chunk(delta);
      // Pause after the first delta that carries something beyond the role.
      if (reply.pauseAfterFirstChunk && i === Math.min(1, deltas.length - 1)) {
        await reply.pauseAfterFirstChunk;
      }
    }
    if (reply.streamError !== undefined) {
      const error = { message: reply.streamError, type: "server_error", param: null, code: null };
      res.end(`data: ${JSON.stringify({ error })}\n\ndata: [DONE]\n\n`);
      return;
    }
    chunk({}, finish);
    if (includeUsage) {
      res.write(
        `data: ${
          JSON.stringify({
            id,
            object: "chat.completion.chunk",
            created,
            model,
            choices: [],
            usage,
          })
        }\n\n`,
      );
    }
    res.end("data: [DONE]\n\n");
  };

  const server = http.createServer((req, res) => {
    res.on("error", () => {});
    answer(req, res).catch((err) => {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const r = err instanceof Rejection ? err : new Rejection(
        500,
        `fake server error: ${err instanceof Error ? err.message : err}`,
        null,
        null,
        "server_error",
      );
      sendRejection(res, r);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}
