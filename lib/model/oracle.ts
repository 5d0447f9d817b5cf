/**
 * The oracle model: an in-process OpenAI-compatible chat completions server that answers
 * each rollout with its task's reference {@link Solution}. It finds the rollout by the
 * `X-Session-ID` header (the interception server forwards the trace id upstream under it).
 *
 * With `solution.commands` and a `bash` tool in the request, turn k (k = assistant
 * messages already carrying a `bash` tool call) calls `bash` with the k-th command; after
 * the last command, or when no `bash` tool is offered, it answers `solution.text` (or
 * `"done"`). JSON and SSE (`stream: true`) replies are both supported.
 *
 * @module
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Solution } from "../../kit/contract.ts";

/** A running oracle server. */
export interface OracleServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  readonly url: string;
  /** Makes `solution` the answer for requests carrying `X-Session-ID: <traceId>`. */
  register(traceId: string, solution: Solution): void;
  /** Forgets a session; later requests for it get a 400. */
  unregister(traceId: string): void;
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
}

/** Text the oracle answers when the solution has none. */
const DEFAULT_TEXT = "done";

/** Characters per streamed content chunk. */
const CHUNK_CHARS = 16;

interface Answer {
  content: string | null;
  toolCall: { id: string; name: string; arguments: string } | null;
}

/** Starts an oracle server on 127.0.0.1 with an OS-chosen port. */
export async function startOracleServer(): Promise<OracleServer> {
  const sessions = new Map<string, Solution>();
  let counter = 0;
  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) {
        sendError(
          res,
          500,
          `oracle failure: ${err instanceof Error ? err.message : err}`,
          "server_error",
        );
      } else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "").split("?")[0];
    if (path !== "/v1/chat/completions") {
      return sendError(res, 404, `unknown route ${req.method} ${path}`, "not_found");
    }
    if (req.method !== "POST") {
      return sendError(res, 405, `method ${req.method} not allowed`, "method_not_allowed");
    }
    const raw = await readBody(req);
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, 400, "request body is not valid JSON", "invalid_json");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return sendError(res, 400, "request body must be a JSON object", "invalid_request");
    }
    if (typeof body.model !== "string" || body.model === "") {
      return sendError(res, 400, "you must provide a model parameter", "missing_model");
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return sendError(res, 400, "'messages' must be a non-empty array", "invalid_messages");
    }
    const sessionId = header(req, "x-session-id");
    const solution = sessionId === null ? undefined : sessions.get(sessionId);
    if (!solution) {
      const what = sessionId === null ? "no X-Session-ID header" : `unknown session '${sessionId}'`;
      return sendError(res, 400, `oracle: ${what}`, "unknown_session");
    }
    const answer = answerFor(solution, body.messages, body.tools);
    const id = `chatcmpl-oracle-${++counter}`;
    const usage = usageFor(body.messages, answer);
    if (body.stream === true) {
      const opts = body.stream_options as { include_usage?: unknown } | undefined;
      return sendStream(res, id, body.model, answer, opts?.include_usage === true ? usage : null);
    }
    sendJson(res, 200, {
      id,
      object: "chat.completion",
      created: nowS(),
      model: body.model,
      choices: [{
        index: 0,
        message: {
          role: "assistant",
          content: answer.content,
          refusal: null,
          ...(answer.toolCall
            ? {
              tool_calls: [{
                id: answer.toolCall.id,
                type: "function",
                function: { name: answer.toolCall.name, arguments: answer.toolCall.arguments },
              }],
            }
            : {}),
        },
        logprobs: null,
        finish_reason: answer.toolCall ? "tool_calls" : "stop",
      }],
      usage,
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    register(traceId, solution) {
      sessions.set(traceId, solution);
    },
    unregister(traceId) {
      sessions.delete(traceId);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        (server as { closeAllConnections?: () => void }).closeAllConnections?.();
      });
    },
  };
}

/** Decides the next reply from the solution and the conversation so far. */
function answerFor(solution: Solution, messages: unknown[], tools: unknown): Answer {
  const commands = solution.commands ?? [];
  if (commands.length > 0 && offersBash(tools)) {
    const done = messages.filter(isBashCall).length;
    if (done < commands.length) {
      return {
        content: null,
        toolCall: {
          id: `call_oracle_${done}`,
          name: "bash",
          arguments: JSON.stringify({ command: commands[done] }),
        },
      };
    }
  }
  return { content: solution.text ?? DEFAULT_TEXT, toolCall: null };
}

function offersBash(tools: unknown): boolean {
  return Array.isArray(tools) &&
    tools.some((t) => (t as { function?: { name?: unknown } })?.function?.name === "bash");
}

function isBashCall(message: unknown): boolean {
  const m = message as { role?: unknown; tool_calls?: unknown };
  return m?.role === "assistant" && Array.isArray(m.tool_calls) &&
    m.tool_calls.some((c) => (c as { function?: { name?: unknown } })?.function?.name === "bash");
}

/** Plausible token counts: about four characters per token. */
function usageFor(messages: unknown[], answer: Answer) {
  const prompt = Math.max(1, Math.ceil(JSON.stringify(messages).length / 4));
  const out = (answer.content ?? "") + (answer.toolCall?.arguments ?? "");
  const completion = Math.max(1, Math.ceil(out.length / 4));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
  };
}

/** Writes the answer as chat completion chunks (SSE), ending with `data: [DONE]`. */
function sendStream(
  res: ServerResponse,
  id: string,
  model: string,
  answer: Answer,
  usage: ReturnType<typeof usageFor> | null,
): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
  });
  const created = nowS();
  const chunk = (delta: Record<string, unknown>, finish: string | null) => {
    const data: Record<string, unknown> = {
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (usage) data.usage = null;
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  };
  if (answer.toolCall) {
    const { id: callId, name, arguments: args } = answer.toolCall;
    chunk({
      role: "assistant",
      content: null,
      tool_calls: [{ index: 0, id: callId, type: "function", function: { name, arguments: "" } }],
    }, null);
    for (const piece of pieces(args)) {
      chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null);
    }
    chunk({}, "tool_calls");
  } else {
    chunk({ role: "assistant", content: "" }, null);
    for (const piece of pieces(answer.content ?? "")) chunk({ content: piece }, null);
    chunk({}, "stop");
  }
  if (usage) {
    const data = { id, object: "chat.completion.chunk", created, model, choices: [], usage };
    res.write(`data: ${JSON.stringify(data)}\n\n`);
  }
  res.end("data: [DONE]\n\n");
}

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += CHUNK_CHARS) out.push(text.slice(i, i + CHUNK_CHARS));
  return out;
}

function sendJson(res: ServerResponse, status: number, data: unknown): void {
  const text = JSON.stringify(data);
  res.writeHead(status, { "content-type": "application/json" });
  res.end(text);
}

function sendError(res: ServerResponse, status: number, message: string, code: string): void {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  sendJson(res, status, { error: { message, type, param: null, code } });
}

function header(req: IncomingMessage, name: string): string | null {
  const v = req.headers[name];
  if (Array.isArray(v)) return v[0] ?? null;
  return v ?? null;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => resolve(text));
    req.on("error", reject);
  });
}

function nowS(): number {
  return Math.floor(Date.now() / 1000);
}
