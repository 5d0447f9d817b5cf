/**
 * The interception server: the single model boundary of a run. Harness programs speak
 * OpenAI chat completions to it (loopback HTTP, one server per run); each rollout has its
 * own secret. For every call it enforces the rollout's limits and stops, swaps in the
 * run's model and sampling, forwards the call upstream (JSON or SSE relayed as it
 * arrives), replays SDK retries instead of sampling again, grows the trace's message graph
 * and records one {@link ModelCall} per real exchange.
 *
 * Status codes the program sees: 401 unknown secret, 409 closed session, 400
 * `rollout stopped: <condition>`, else the provider's own status (503/504/502 for
 * transport, timeout and malformed responses).
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHash, randomBytes } from "node:crypto";
import { ProviderError, type TraceErrorRecord, traceErrorRecord } from "../../kit/errors.ts";
import type { ModelCall, Trace } from "../../kit/trace/types.ts";
import {
  applyChatOverrides,
  CHAT_ENDPOINT,
  ChatStreamAccumulator,
  chatToMessage,
  errorMessageOf,
  isContextLengthError,
  isUsageOnlyChunk,
  normalizeFinishReason,
  openAIErrorBody,
  outcomeFromCompletion,
  recordedSampling,
  toolSpecsFromChat,
} from "./chat_dialect.ts";
import type { ChatOutcome, ChatRequestBody } from "./chat_dialect.ts";
import { commitTurn } from "./graph.ts";
import type { ProviderClient, ProviderResponse } from "./provider_client.ts";
import { formatSseEvent, SseSplitter } from "./sse.ts";
import { redact } from "../../kit/secrets.ts";
import { isRecord } from "../../kit/util/is_record.ts";
import type { SessionLimits } from "../config/eval_config.ts";

/** A log callback (the library never prints). */
export type InterceptionLog = (level: "debug" | "info" | "warn", message: string) => void;

/** Options of {@link startInterceptionServer}. */
export interface InterceptionServerOptions {
  log?: InterceptionLog;
}

export type { SessionLimits };

/** The parts of a trace the server reads and writes. A full {@link Trace} fits. */
export type SessionTrace = Pick<Trace, "id" | "nodes" | "calls" | "tools" | "stop_condition">;

/** How one rollout's calls are handled. */
export interface SessionOptions {
  /** Grown live: nodes, calls, tools and stop_condition. */
  trace: SessionTrace;
  /** Always replaces the program's model. */
  model: string;
  /** Non-null keys overlay the program's body (extras included). */
  sampling: Record<string, unknown>;
  /** The upstream provider. */
  client: ProviderClient;
  /** Checked before each model call; a null or absent limit is no limit. */
  limits: Partial<SessionLimits>;
  /** Checked before each call (after the limits); a name stops the rollout under it. */
  stops?: () => Promise<string | null>;
}

/** One rollout's handle on the server. */
export interface InterceptionSession {
  /** The bearer token the program must send. */
  readonly secret: string;
  /** Base URL for the program's OpenAI client (`<server url>/v1`). */
  readonly endpoint: string;
  /** The condition that stopped this session, if any. */
  readonly stopCondition: string | null;
  /** The last provider error of this session, if any. */
  readonly providerError: ProviderError | null;
  /** Sum of the durations of this session's model calls, in seconds. */
  readonly modelSeconds: number;
  /** Ends the session: later requests get 409; in-flight calls are aborted and recorded. */
  close(): void;
}

/** The run's interception server. */
export interface InterceptionServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Opens a session for one rollout. */
  open(options: SessionOptions): InterceptionSession;
  /** Closes every session and the server. */
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_REPLAYS = 32;
/** Closed sessions whose secrets still get 409 (older ones get 401). */
const MAX_CLOSED_SECRETS = 4096;

/** Headers of the program's request that are never forwarded upstream. */
const DROP_REQUEST_HEADERS = new Set([
  "authorization",
  "x-api-key",
  "host",
  "content-length",
  "content-type",
  "accept-encoding",
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "cookie",
  "x-session-id",
  "x-stainless-retry-count",
]);

/** Headers of the provider's response that are never relayed to the program. */
const DROP_RESPONSE_HEADERS = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "content-length",
  "content-encoding",
  "date",
  "server",
  "set-cookie",
]);

/** A response kept for replaying an SDK retry. */
interface Recorded {
  status: number;
  headers: Record<string, string>;
  /** The JSON body, or the SSE events as written to the program. */
  body: string;
}

interface InFlight {
  call: ModelCall;
  recorded: boolean;
}

/** A call cut off because its rollout ended: Python records the cancellation's type. */
const closedError = () => traceErrorRecord("CancelledError", "rollout session closed");

function now(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

class Session implements InterceptionSession {
  readonly secret: string;
  readonly endpoint: string;
  readonly options: SessionOptions;
  stopCondition: string | null = null;
  providerError: ProviderError | null = null;
  modelSeconds = 0;
  closed = false;
  readonly abort = new AbortController();
  readonly replays = new Map<string, Promise<Recorded | null>>();
  readonly inFlight = new Set<InFlight>();
  readonly #onClose: (s: Session) => void;

  constructor(endpoint: string, options: SessionOptions, onClose: (s: Session) => void) {
    this.secret = randomBytes(24).toString("hex");
    this.endpoint = endpoint;
    this.options = options;
    this.#onClose = onClose;
  }

  /** Records the condition that stops this session; the trace keeps the first one. */
  stop(condition: string): void {
    this.stopCondition ??= condition;
    this.options.trace.stop_condition ??= condition;
  }

  /** Appends a call to the trace once (with its end time) and counts its duration. */
  finish(entry: InFlight, error?: TraceErrorRecord): void {
    this.inFlight.delete(entry);
    if (entry.recorded) return;
    entry.recorded = true;
    const call = entry.call;
    if (error !== undefined && call.error === null) call.error = error;
    call.time.end = now();
    this.modelSeconds += Math.max(0, call.time.end - call.time.start);
    this.options.trace.calls.push(call);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Upstream requests exist only while their call is in flight; with none, skip the
    // abort (a DOMException per rollout is a measurable cost on the hot path).
    const busy = this.inFlight.size > 0;
    for (const entry of [...this.inFlight]) this.finish(entry, closedError());
    if (busy) this.abort.abort(new DOMException("rollout session closed", "AbortError"));
    this.replays.clear();
    this.#onClose(this);
  }
}

function sendJson(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(text);
}

/** The routes this server answers, as said in its 404s. */
const SERVED = "POST /v1/chat/completions, GET /v1/models, GET /v1/models/<id>";

/** The answer to the Responses API, which an agent's SDK prints as the error's message. */
const RESPONSES_UNSUPPORTED =
  "The Responses API (POST /v1/responses) is not supported here: verifiers-ts records model " +
  "calls through the Chat Completions API. Use chat completions " +
  "(client.chat.completions.create) with this base URL.";

/**
 * `GET /v1/models` (a list holding the run's model, whatever the program asked for) and
 * `GET /v1/models/<id>` (the run's model; any other id is `model_not_found`), in OpenAI's shape.
 */
function sendModels(res: http.ServerResponse, route: string, model: string): void {
  const card = { id: model, object: "model", created: 0, owned_by: "verifiers-ts" };
  if (route === "/v1/models") return sendJson(res, 200, { object: "list", data: [card] });
  let id = route.slice("/v1/models/".length);
  try {
    id = decodeURIComponent(id);
  } catch {
    // a malformed escape is just another unknown id
  }
  if (id === model) return sendJson(res, 200, card);
  sendError(
    res,
    404,
    `The model '${id.slice(0, 200)}' does not exist here; this run's model is '${model}'`,
    "invalid_request_error",
    "model_not_found",
  );
}

/** An error of our own: the SDK must not retry it. */
function sendError(
  res: http.ServerResponse,
  status: number,
  message: string,
  type = "invalid_request_error",
  code: string | null = null,
): void {
  sendJson(res, status, openAIErrorBody(message, type, code), { "x-should-retry": "false" });
}

function relayHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!DROP_RESPONSE_HEADERS.has(k)) out[k] = v;
  return out;
}

function forwardHeaders(raw: http.IncomingHttpHeaders, traceId: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    const key = k.toLowerCase();
    if (v === undefined || DROP_REQUEST_HEADERS.has(key)) continue;
    out[key] = Array.isArray(v) ? v.join(", ") : v;
  }
  out["x-session-id"] = traceId;
  return out;
}

function bearer(req: http.IncomingMessage): string | null {
  const auth = req.headers["authorization"];
  const m = typeof auth === "string" ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
  return m ? m[1].trim() : null;
}

function readBody(req: http.IncomingMessage): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    const parts: Uint8Array[] = [];
    let size = 0;
    req.on("data", (chunk: Uint8Array) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on("end", () => {
      const out = new Uint8Array(size);
      let offset = 0;
      for (const p of parts) {
        out.set(p, offset);
        offset += p.byteLength;
      }
      resolve(out);
    });
    req.on("error", reject);
  });
}

function tokensSoFar(trace: SessionTrace): { input: number; output: number } {
  let input = 0;
  let output = 0;
  for (const call of trace.calls) {
    if (!call.usage) continue;
    input += call.usage.prompt_tokens + (call.usage.cached_input_tokens ?? 0);
    output += call.usage.completion_tokens;
  }
  return { input, output };
}

/** The first limit reached before a new call, or null. */
function limitReached(trace: SessionTrace, limits: Partial<SessionLimits>): string | null {
  const reached = (limit: number | null | undefined, value: number) =>
    typeof limit === "number" && value >= limit;
  if (reached(limits.max_turns, trace.nodes.filter((n) => n.sampled).length)) return "max_turns";
  const { input, output } = tokensSoFar(trace);
  if (reached(limits.max_input_tokens, input)) return "max_input_tokens";
  if (reached(limits.max_output_tokens, output)) return "max_output_tokens";
  if (reached(limits.max_total_tokens, input + output)) return "max_total_tokens";
  return null;
}

function safeWrite(res: http.ServerResponse, text: string): void {
  if (res.destroyed || res.writableEnded) return;
  try {
    res.write(text);
  } catch {
    // the program went away; the exchange is still completed and recorded
  }
}

/** Starts the interception server on 127.0.0.1 (OS-chosen port). */
export async function startInterceptionServer(
  options: InterceptionServerOptions = {},
): Promise<InterceptionServer> {
  const log: InterceptionLog = options.log ?? (() => {});
  const sessions = new Map<string, Session>();
  /** Secrets of closed sessions (their requests get 409; the sessions themselves are dropped). */
  const closedSecrets = new Set<string>();
  const closedRing: (string | undefined)[] = new Array(MAX_CLOSED_SECRETS);
  let closedAt = 0;
  /** Providers that refused `stream_options` (some servers reject the field). */
  const refuseStreamOptions = new WeakSet<ProviderClient>();

  /** One program request to `/v1/chat/completions`. */
  const handleChat = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    session: Session,
  ): Promise<void> => {
    const raw = await readBody(req);
    if (raw === null) return sendError(res, 413, "request body too large");
    let body: ChatRequestBody;
    try {
      body = JSON.parse(new TextDecoder().decode(raw));
    } catch {
      return sendError(res, 400, "We could not parse the JSON body of your request.");
    }
    if (!isRecord(body) || !Array.isArray(body.messages)) {
      return sendError(res, 400, "'messages' is a required property", "invalid_request_error");
    }
    if (session.closed) return sendError(res, 409, "rollout session is closed");

    const digest = createHash("sha256").update(raw).digest("hex");
    const retryCount = Number(req.headers["x-stainless-retry-count"] ?? 0);
    if (retryCount > 0) {
      const prior = session.replays.get(digest);
      const recorded = prior ? await prior : null;
      if (recorded) {
        log(
          "debug",
          `replaying a recorded response for an SDK retry (trace ${session.options.trace.id})`,
        );
        if (res.headersSent || res.destroyed) return;
        res.writeHead(recorded.status, recorded.headers);
        res.end(recorded.body);
        return;
      }
      if (session.closed) return sendError(res, 409, "rollout session is closed");
    }

    const { trace } = session.options;
    const refuse = (condition: string) => {
      session.stop(condition);
      log("debug", `refused a model call of trace ${trace.id}: rollout stopped: ${condition}`);
      sendError(
        res,
        400,
        `rollout stopped: ${condition}`,
        "invalid_request_error",
        "rollout_stopped",
      );
    };
    const already = session.stopCondition ?? trace.stop_condition;
    if (already !== null) return refuse(already);
    const limit = limitReached(trace, session.options.limits);
    if (limit !== null) return refuse(limit);
    if (session.options.stops) {
      let name: string | null;
      try {
        name = await session.options.stops();
      } catch (err) {
        log("warn", `a stop check failed: ${err instanceof Error ? err.message : String(err)}`);
        return sendError(res, 500, "stop check failed", "server_error");
      }
      if (session.closed) return sendError(res, 409, "rollout session is closed");
      if (name) return refuse(name);
    }

    let settle: (r: Recorded | null) => void = () => {};
    const replay = new Promise<Recorded | null>((resolve) => (settle = resolve));
    session.replays.set(digest, replay);
    while (session.replays.size > MAX_REPLAYS) {
      session.replays.delete(session.replays.keys().next().value as string);
    }
    let recorded: Recorded | null = null;
    try {
      recorded = await exchange(req, res, session, body);
    } finally {
      settle(recorded);
      if (!recorded && session.replays.get(digest) === replay) session.replays.delete(digest);
    }
  };

  /** Sends one call upstream, relays the answer, records it. Returns it when it succeeded. */
  const exchange = async (
    req: http.IncomingMessage,
    res: http.ServerResponse,
    session: Session,
    body: ChatRequestBody,
  ): Promise<Recorded | null> => {
    const { trace, model, sampling, client } = session.options;
    const sent = applyChatOverrides(body, model, sampling);
    const streaming = sent.stream === true;
    const programOptions = isRecord(sent.stream_options) ? sent.stream_options : {};
    const programWantsUsage = streaming && programOptions.include_usage === true;
    // usage of streamed calls is asked for, unless the provider said it takes no stream_options
    const asksUsage = streaming && !refuseStreamOptions.has(client);
    if (asksUsage) sent.stream_options = { ...programOptions, include_usage: true };
    else if (streaming) delete sent.stream_options;

    const entry: InFlight = {
      call: {
        node: null,
        model,
        sampling: recordedSampling(sent, sampling),
        endpoint: CHAT_ENDPOINT,
        finish_reason: null,
        usage: null,
        time: { start: now(), end: 0 },
        error: null,
      },
      recorded: false,
    };
    session.inFlight.add(entry);
    const call = entry.call;

    const fail = (err: ProviderError) => {
      if (session.closed) return;
      session.providerError = err;
      log("warn", `model call of trace ${trace.id} failed: ${err.message}`);
      session.finish(entry, traceErrorRecord("ProviderError", err.message, err.statusCode ?? null));
    };
    const commit = (outcome: ChatOutcome) => {
      if (session.closed) return;
      call.finish_reason = normalizeFinishReason(outcome.finishReason);
      if (outcome.finishReason !== null && call.finish_reason === null) {
        call.native_finish_reason = outcome.finishReason;
      }
      call.usage = outcome.usage;
      call.node = commitTurn(trace.nodes, body.messages.map(chatToMessage), outcome.message);
      if (Array.isArray(sent.tools)) trace.tools = toolSpecsFromChat(sent.tools);
      session.finish(entry);
    };

    // A new attempt clears the last one's error: only an error that no later call
    // repaired fails the rollout (verifiers/v1/interception/server.py@a60a606).
    session.providerError = null;
    let response: ProviderResponse;
    const send = () =>
      client.send({
        path: CHAT_ENDPOINT,
        body: sent,
        headers: forwardHeaders(req.headers, trace.id),
        signal: session.abort.signal,
      });
    try {
      response = await send();
      if (asksUsage && response.status === 400) {
        const text = response.kind === "json" ? response.text : await drain(response);
        if (/stream_options|include_usage/i.test(text)) {
          // the provider rejects the field: say so once and stream without it from now on
          if (!refuseStreamOptions.has(client)) {
            log(
              "warn",
              "the provider refuses stream_options: streamed calls are sent without it " +
                "(their token usage is then not recorded)",
            );
          }
          refuseStreamOptions.add(client);
          delete sent.stream_options;
          response = await send();
        } else response = { ...response, kind: "json", text, json: parseJsonOrNull(text) };
      }
    } catch (err) {
      if (session.closed) return closedMidway(res, entry, session);
      const perr = err instanceof ProviderError
        ? err
        : new ProviderError(`model call failed: ${err instanceof Error ? err.message : err}`, 502);
      fail(perr);
      sendJson(res, perr.statusCode ?? 502, openAIErrorBody(perr.message, "provider_error"));
      return null;
    }

    try {
      if (response.status < 200 || response.status >= 300) {
        // Scrubbed before it is recorded or relayed: a provider may echo the key back.
        const text = redact(response.kind === "json" ? response.text : await drain(response));
        const message = errorMessageOf(text);
        if (isContextLengthError(response.status, message)) {
          if (!session.closed) {
            session.stop("context_length");
            session.finish(entry, traceErrorRecord("ProviderError", message, response.status));
          }
          sendError(
            res,
            400,
            "rollout stopped: context_length",
            "invalid_request_error",
            "context_length_exceeded",
          );
          return null;
        }
        fail(
          new ProviderError(
            `provider returned HTTP ${response.status}: ${message}`,
            response.status,
          ),
        );
        if (!res.headersSent && !res.destroyed) {
          res.writeHead(response.status, {
            ...relayHeaders(response.headers),
            "content-type": response.headers["content-type"] ?? "application/json",
          });
          res.end(text);
        }
        return null;
      }

      if (streaming !== (response.kind === "stream")) {
        // Python v1 reads a reply of the other kind as malformed (a 502 the program's SDK
        // may retry), never as the program's failure.
        if (response.kind === "stream") response.cancel();
        const err = new ProviderError(
          streaming
            ? "malformed upstream response: the provider answered a streaming request with " +
              `${response.headers["content-type"] || "no content type"}, not text/event-stream`
            : "malformed upstream response: the provider streamed (text/event-stream) a reply " +
              "to a request that did not ask for a stream",
          502,
        );
        fail(err);
        sendJson(res, 502, openAIErrorBody(err.message, "provider_error"));
        return null;
      }

      if (response.kind === "json") {
        const outcome = outcomeFromCompletion(response.json);
        if (!outcome) {
          const err = new ProviderError("provider returned a completion without choices", 502);
          fail(err);
          sendJson(res, 502, openAIErrorBody(err.message, "provider_error"));
          return null;
        }
        commit(outcome);
        const headers = { ...relayHeaders(response.headers), "content-type": "application/json" };
        const text = redact(response.text);
        sendJson(res, response.status, text, headers);
        return { status: response.status, headers, body: text };
      }

      return await relayStream(res, session, entry, response, programWantsUsage, commit, fail);
    } catch (err) {
      if (session.closed) return closedMidway(res, entry, session);
      throw err;
    } finally {
      // Anything not recorded yet (an unexpected throw) still becomes a ModelCall.
      if (!entry.recorded && !session.closed) {
        session.finish(entry, traceErrorRecord("InterceptionError", "model call did not complete"));
      }
    }
  };

  /** Relays an SSE response event by event; commits and sends `[DONE]` at the end. */
  const relayStream = async (
    res: http.ServerResponse,
    session: Session,
    entry: InFlight,
    response: Extract<ProviderResponse, { kind: "stream" }>,
    programWantsUsage: boolean,
    commit: (o: ChatOutcome) => void,
    fail: (e: ProviderError) => void,
  ): Promise<Recorded | null> => {
    const headers = {
      ...relayHeaders(response.headers),
      "content-type": response.headers["content-type"] ?? "text/event-stream",
      "cache-control": "no-cache",
    };
    res.writeHead(response.status, headers);
    const written: string[] = [];
    const write = (text: string) => {
      written.push(text);
      safeWrite(res, text);
    };
    const splitter = new SseSplitter();
    const acc = new ChatStreamAccumulator();
    let done: string | null = null;
    let upstreamError: string | null = null;
    let malformed: string | null = null;
    const handle = (events: ReturnType<SseSplitter["push"]>) => {
      for (const event of events) {
        if (done !== null || malformed !== null) continue;
        if (event.data !== null && event.data.trim() === "[DONE]") {
          done = formatSseEvent(event);
          continue;
        }
        let chunk: unknown = undefined;
        if (event.data !== null) {
          try {
            chunk = JSON.parse(event.data);
          } catch {
            chunk = undefined;
          }
          if (!isRecord(chunk)) {
            malformed = redact(event.data.slice(0, 200));
            continue;
          }
        }
        if (isRecord(chunk) && chunk.error !== undefined && chunk.error !== null) {
          upstreamError = redact(
            isRecord(chunk.error) && typeof chunk.error.message === "string"
              ? chunk.error.message
              : JSON.stringify(chunk.error),
          );
        }
        acc.add(chunk);
        if (!programWantsUsage && isUsageOnlyChunk(chunk)) continue;
        write(redact(formatSseEvent(event)));
      }
    };
    try {
      for await (const bytes of response.body) handle(splitter.push(bytes));
      handle(splitter.end());
    } catch (err) {
      if (session.closed) {
        closedMidway(res, entry, session);
        return null;
      }
      fail(
        err instanceof ProviderError ? err : new ProviderError(
          `model stream failed: ${err instanceof Error ? err.message : err}`,
          502,
        ),
      );
      res.destroy();
      return null;
    }
    if (upstreamError !== null) {
      fail(new ProviderError(`provider stream reported an error: ${upstreamError}`, 502));
      res.end();
      return null;
    }
    const broken = malformed !== null
      ? `provider stream carried a malformed event: ${JSON.stringify(malformed)}`
      : !acc.sawChoice
      ? "provider stream ended without a completion"
      : done === null
      ? "provider stream ended before its terminal event (data: [DONE])"
      : null;
    if (broken !== null) {
      // Cut the program's stream off: ended cleanly it would pass for a complete answer.
      fail(new ProviderError(broken, 502));
      response.cancel();
      res.destroy();
      return null;
    }
    commit(acc.result());
    write(done!);
    if (!res.writableEnded && !res.destroyed) res.end();
    return { status: response.status, headers, body: written.join("") };
  };

  /** The session closed while a call was in flight: the call is recorded, the program cut off. */
  const closedMidway = (res: http.ServerResponse, entry: InFlight, session: Session): null => {
    session.finish(entry, closedError());
    if (!res.headersSent) sendError(res, 409, "rollout session is closed");
    else res.destroy();
    return null;
  };

  const server = http.createServer((req, res) => {
    res.on("error", () => {});
    const route = (req.url ?? "/").split("?")[0];
    const handle = async () => {
      if (route === "/v1/responses" || route.startsWith("/v1/responses/")) {
        req.resume();
        return sendError(
          res,
          404,
          RESPONSES_UNSUPPORTED,
          "invalid_request_error",
          "unsupported_api",
        );
      }
      const models = route === "/v1/models" || route.startsWith("/v1/models/");
      if (route !== "/v1/chat/completions" && !models) {
        req.resume();
        return sendError(
          res,
          404,
          `Unknown request URL: ${req.method} ${route} (this server answers ${SERVED})`,
          "invalid_request_error",
          "unknown_url",
        );
      }
      if (req.method !== (models ? "GET" : "POST")) {
        req.resume();
        return sendError(res, 405, `Method ${req.method} not allowed on ${route}`);
      }
      const secret = bearer(req);
      const session = secret === null ? undefined : sessions.get(secret);
      if (!session || session.closed) {
        req.resume();
        if (session || (secret !== null && closedSecrets.has(secret))) {
          return sendError(res, 409, "rollout session is closed");
        }
        return sendError(
          res,
          401,
          "invalid or missing interception secret",
          "invalid_request_error",
          "invalid_api_key",
        );
      }
      if (models) return sendModels(res, route, session.options.model);
      await handleChat(req, res, session);
    };
    handle().catch((err) => {
      log(
        "warn",
        `interception request failed: ${err instanceof Error ? err.message : String(err)}`,
      );
      sendError(res, 500, "interception server error", "server_error");
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    open(opts: SessionOptions): InterceptionSession {
      const session = new Session(`${url}/v1`, opts, (closed) => {
        sessions.delete(closed.secret);
        // Remember recent ones only (a ring), so a long run does not grow with every
        // rollout; an older secret then gets 401 instead of 409, an error all the same.
        const evicted = closedRing[closedAt];
        if (evicted !== undefined) closedSecrets.delete(evicted);
        closedRing[closedAt] = closed.secret;
        closedAt = (closedAt + 1) % MAX_CLOSED_SECRETS;
        closedSecrets.add(closed.secret);
      });
      sessions.set(session.secret, session);
      return session;
    },
    async close(): Promise<void> {
      for (const s of [...sessions.values()]) s.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      });
    },
  };
}

function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

async function drain(response: Extract<ProviderResponse, { kind: "stream" }>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const bytes of response.body) text += decoder.decode(bytes, { stream: true });
  return text + decoder.decode();
}
