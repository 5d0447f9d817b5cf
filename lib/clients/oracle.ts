/**
 * The oracle model: a provider that answers each rollout with its task's reference
 * {@link Solution}, in the dialect of the route it is called on (every dialect of
 * lib/dialects/mod.ts: chat completions, Anthropic Messages, ...). It finds the rollout by the
 * `X-Session-ID` header (the interception server forwards the trace id upstream under it).
 *
 * With `solution.commands` and a `bash` tool in the request, turn k (k = assistant
 * messages already carrying a `bash` tool call) calls `bash` with the k-th command; after
 * the last command, or when no `bash` tool is offered, it answers `solution.text` (or
 * `"done"`). JSON and SSE (`stream: true`) replies are both supported. A run reaches it
 * in-process ({@link inProcessOracle}); {@link startOracleServer} serves it over HTTP.
 *
 * @module
 */
import { createServer } from "node:http";
import type { Solution } from "../../kit/contract.ts";
import type { Message, ToolSpec } from "../../kit/trace/types.ts";
import type { Dialect, DialectOutcome } from "../../kit/wire/dialect.ts";
import {
  closeServer,
  fromNode,
  listenLoopback,
  sendJson,
  type WireHandler,
  type WireReply,
} from "../../kit/wire/http.ts";
import { inProcessClient } from "./in_process_client.ts";
import { ALL_DIALECTS } from "../dialects/mod.ts";
import type { ProviderClient } from "./provider_types.ts";

const decoder = new TextDecoder();

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

/** Largest request body read. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** The oracle's answers, whatever carries the requests. */
export interface Oracle {
  /** Makes `solution` the answer for requests carrying `X-Session-ID: <traceId>`. */
  register(traceId: string, solution: Solution): void;
  /** Forgets a session; later requests for it get a 400. */
  unregister(traceId: string): void;
  /** Serves one request to a dialect's model-call route (e.g. `/v1/chat/completions`). */
  readonly handle: WireHandler;
}

/** The dialect whose model-call route is `path`, if any. */
function dialectAt(dialects: readonly Dialect[], path: string): Dialect | undefined {
  return dialects.find((d) => d.routes.some((r) => !r.answer && !r.relay && r.path === path));
}

/** The oracle's state and request handler (serve it with {@link startOracleServer}). */
function createOracle(dialects: readonly Dialect[] = ALL_DIALECTS): Oracle {
  const sessions = new Map<string, Solution>();
  let counter = 0;

  async function serve(...[req, reply]: Parameters<WireHandler>): Promise<void> {
    const path = req.path;
    const dialect = dialectAt(dialects, path);
    if (!dialect) {
      req.discard();
      return sendError(reply, 404, `unknown route ${req.method} ${path}`, "not_found");
    }
    const fail = (status: number, message: string, code: string) =>
      sendError(reply, status, message, code, dialect);
    if (req.method !== "POST") {
      req.discard();
      return fail(405, `method ${req.method} not allowed`, "method_not_allowed");
    }
    const raw = await req.body(MAX_BODY_BYTES);
    if (raw === null) return fail(413, "request body too large", "too_large");
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(decoder.decode(raw));
    } catch {
      return fail(400, "request body is not valid JSON", "invalid_json");
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return fail(400, "request body must be a JSON object", "invalid_request");
    }
    if (typeof body.model !== "string" || body.model === "") {
      return fail(400, "you must provide a model parameter", "missing_model");
    }
    const request = dialect.parseRequest(body);
    if (typeof request === "string") return fail(400, request, "invalid_messages");
    if (request.messages.length === 0) {
      return fail(400, "'messages' must be a non-empty array", "invalid_messages");
    }
    const sessionId = req.headers["x-session-id"] ?? null;
    const solution = sessionId === null ? undefined : sessions.get(sessionId);
    if (!solution) {
      const what = sessionId === null ? "no X-Session-ID header" : `unknown session '${sessionId}'`;
      return fail(400, `oracle: ${what}`, "unknown_session");
    }
    const tools = dialect.prepare(request, body.model, {}, { streamUsage: false }).tools;
    const outcome = answerFor(solution, request.messages, tools);
    const meta = { id: `${dialect.id}-oracle-${++counter}`, model: body.model, created: nowS() };
    if (!request.stream) return sendJson(reply, 200, dialect.renderResponse(outcome, meta));
    const opts = body.stream_options as { include_usage?: unknown } | undefined;
    const events = dialect.renderStream(outcome, {
      ...meta,
      includeUsage: opts?.include_usage === true,
    });
    reply.head(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "connection": "keep-alive",
    });
    const last = events.pop();
    for (const event of events) reply.write(event);
    reply.end(last);
  }

  return {
    register: (traceId, solution) => void sessions.set(traceId, solution),
    unregister: (traceId) => void sessions.delete(traceId),
    handle: (req, reply) =>
      serve(req, reply).catch((err) => {
        const message = `oracle failure: ${err instanceof Error ? err.message : err}`;
        if (!reply.headersSent) sendError(reply, 500, message, "server_error");
        else reply.end();
      }),
  };
}

/** The base URL of an in-process oracle: a name in messages, never dialled. */
const IN_PROCESS_ORACLE_URL = "http://oracle.in-process/v1";

/** An oracle reached in-process, and the provider client that reaches it. */
export interface InProcessOracle extends OracleServer {
  /** The run's provider: calls the oracle's handler directly, with no socket. */
  readonly client: ProviderClient;
}

/** An oracle with no server: the interception server calls it through `client`. */
export function inProcessOracle(): InProcessOracle {
  const oracle = createOracle();
  return {
    url: IN_PROCESS_ORACLE_URL,
    client: inProcessClient(IN_PROCESS_ORACLE_URL, oracle.handle),
    register: oracle.register,
    unregister: oracle.unregister,
    close: () => Promise.resolve(),
  };
}

/** Starts an oracle server on 127.0.0.1 with an OS-chosen port. */
export async function startOracleServer(): Promise<OracleServer> {
  const oracle = createOracle();
  const server = createServer((req, res) => void oracle.handle(...fromNode(req, res)));
  const url = await listenLoopback(server);
  return {
    url: `${url}/v1`,
    register: oracle.register,
    unregister: oracle.unregister,
    close: () => closeServer(server),
  };
}

/** Decides the next reply from the solution and the conversation so far. */
function answerFor(
  solution: Solution,
  messages: readonly Message[],
  tools: readonly ToolSpec[] | null,
): DialectOutcome {
  const commands = solution.commands ?? [];
  if (commands.length > 0 && tools?.some((t) => t.name === "bash")) {
    const done = messages.filter(isBashCall).length;
    if (done < commands.length) {
      const args = JSON.stringify({ command: commands[done] });
      const message: Message = {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `call_oracle_${done}`, name: "bash", arguments: args }],
      };
      return { message, finishReason: "tool_calls", usage: usageFor(messages, args) };
    }
  }
  const text = solution.text ?? DEFAULT_TEXT;
  const message: Message = { role: "assistant", content: text };
  return { message, finishReason: "stop", usage: usageFor(messages, text) };
}

function isBashCall(message: Message): boolean {
  return message.role === "assistant" && (message.tool_calls ?? []).some((c) => c.name === "bash");
}

/** Plausible token counts: about four characters per token. */
function usageFor(messages: readonly Message[], answer: string) {
  const prompt = Math.max(1, Math.ceil(JSON.stringify(messages).length / 4));
  const completion = Math.max(1, Math.ceil(answer.length / 4));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    cached_input_tokens: null,
    reasoning_tokens: null,
    cost: null,
  };
}

/** An error in the dialect's shape (OpenAI's by default): the oracle's own `code`. */
function sendError(
  reply: WireReply,
  status: number,
  message: string,
  code: string,
  dialect: Dialect = ALL_DIALECTS[0]!,
): void {
  const type = status >= 500 ? "server_error" : "invalid_request_error";
  sendJson(reply, status, dialect.errorBody(message, type, code, status));
}

function nowS(): number {
  return Math.floor(Date.now() / 1000);
}
