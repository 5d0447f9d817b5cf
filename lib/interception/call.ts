/**
 * One model call through the interception server: the program's request is read by its
 * dialect, checked against the session (closed, stopped, limits, stop conditions), an SDK
 * retry is answered with the recorded response, else the call goes upstream with the run's
 * model and sampling, its answer is relayed (JSON, or SSE by relay.ts) and recorded as one
 * {@link ModelCall} and the message graph grows.
 *
 * @module
 */
import { ProviderError, traceErrorRecord } from "../../kit/errors.ts";
import { redact } from "../../kit/secrets.ts";
import { anySignal } from "../../kit/util/any_signal.ts";
import type {
  Dialect,
  DialectOutcome,
  DialectRequest,
  TraceFinishReason,
  UpstreamCall,
} from "../../kit/wire/dialect.ts";
import { sendJson, type WireReply, type WireRequest } from "../../kit/wire/http.ts";
import { normalizeFinishReason } from "../dialects/chat/codec.ts";
import { commitTurn } from "./graph.ts";
import { consumePrepared } from "./hooks.ts";
import { requestBoundary, responseHooks } from "./call_hooks.ts";
import type { ProviderClient, ProviderResponse } from "../clients/provider_client.ts";
import { relayHeaders, upstreamHeaders } from "./headers.ts";
import { drain, parseJsonOrNull, relayStream, type StreamCall } from "./relay.ts";
import {
  imageRefusal,
  providerDialect,
  streamTranslation,
  translatedAnswer,
  translateRequest,
} from "./translate.ts";
import {
  closedError,
  type InFlight,
  limitReached,
  now,
  type Recorded,
  replayKeyOf,
  type Session,
  writeRecorded,
} from "./session.ts";

/** What the handlers of one server share. */
export interface ServerContext {
  log: (level: "debug" | "info" | "warn", message: string) => void;
  /** Providers that refused the stream-usage option (some servers reject the field). */
  refuseStreamUsage: WeakSet<ProviderClient>;
  /** The dialects the provider serves; a call in another is translated (translate.ts). */
  providerDialects: readonly Dialect[];
  /** False when the provider takes no images (`client.images`): such a call is refused. */
  providerImages: boolean;
}

/** The largest program request body read (a longer one is refused, 413). */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
const decoder = new TextDecoder();
const MAX_REPLAYS = 32;

/** An error of the server's own, in the dialect's shape: the SDK must not retry it. */
export function sendError(
  reply: WireReply,
  dialect: Dialect,
  status: number,
  message: string,
  type = "invalid_request_error",
  code: string | null = null,
): void {
  sendJson(reply, status, dialect.errorBody(message, type, code, status), {
    "x-should-retry": "false",
  });
}

/** Handles one program request to the dialect's call route. */
export async function handleCall(
  ctx: ServerContext,
  dialect: Dialect,
  req: WireRequest,
  reply: WireReply,
  session: Session,
): Promise<void> {
  const fail = (status: number, message: string, type?: string, code?: string) =>
    sendError(reply, dialect, status, message, type, code);
  const raw = await req.body(MAX_BODY_BYTES);
  if (raw === null) return fail(413, "request body too large");
  let json: unknown;
  const text = decoder.decode(raw);
  try {
    json = JSON.parse(text);
  } catch {
    return fail(400, "We could not parse the JSON body of your request.");
  }
  const request = dialect.parseRequest(json);
  if (typeof request === "string") return fail(400, request, "invalid_request_error");
  if (session.closed) return fail(409, "rollout session is closed");

  const replayKey = replayKeyOf(text, raw);
  const retryCount = Number(req.headers["x-stainless-retry-count"] ?? 0);
  if (retryCount > 0) {
    const prior = session.replays.get(replayKey);
    const recorded = prior ? await prior : null;
    if (recorded) {
      ctx.log(
        "debug",
        `replaying a recorded response for an SDK retry (trace ${session.options.trace.id})`,
      );
      if (reply.headersSent || reply.finished) return;
      writeRecorded(reply, recorded);
      return;
    }
    if (session.closed) return fail(409, "rollout session is closed");
  }

  const { trace } = session.options;
  const refuse = (condition: string) => {
    session.stop(condition);
    ctx.log("debug", `refused a model call of trace ${trace.id}: rollout stopped: ${condition}`);
    fail(400, `rollout stopped: ${condition}`, "invalid_request_error", "rollout_stopped");
  };
  const already = session.stopCondition ?? trace.stop_condition;
  if (already !== null) return refuse(already);
  const auxiliary = session.options.auxiliary?.({ path: req.path, body: json }) ?? null;
  // an auxiliary call is no turn: the turn limit and stop conditions wait for the agent's own
  const limit = auxiliary === null ? limitReached(trace, session.options.limits) : null;
  if (limit !== null) return refuse(limit);
  if (session.options.stops && auxiliary === null) {
    let name: string | null;
    try {
      name = await session.options.stops();
    } catch (err) {
      ctx.log("warn", `a stop check failed: ${err instanceof Error ? err.message : String(err)}`);
      return fail(500, "stop check failed", "server_error");
    }
    if (session.closed) return fail(409, "rollout session is closed");
    if (name) return refuse(name);
  }

  // the task's request hooks and stops (call_hooks.ts): a rewrite goes upstream, a stop ends here
  const hooked = await requestBoundary(ctx, dialect, session, request, auxiliary, fail, refuse);
  if (hooked === null) return;

  let settle: (r: Recorded | null) => void = () => {};
  const replay = new Promise<Recorded | null>((resolve) => (settle = resolve));
  session.replays.set(replayKey, replay);
  while (session.replays.size > MAX_REPLAYS) {
    session.replays.delete(session.replays.keys().next().value as string);
  }
  let recorded: Recorded | null = null;
  try {
    recorded = await exchange(ctx, dialect, req, reply, session, hooked, auxiliary);
  } finally {
    settle(recorded);
    if (!recorded && session.replays.get(replayKey) === replay) session.replays.delete(replayKey);
  }
}

/** Sends one call upstream, relays the answer, records it. Returns it when it succeeded. */
async function exchange(
  ctx: ServerContext,
  dialect: Dialect,
  req: WireRequest,
  reply: WireReply,
  session: Session,
  { sent: request, rewritten }: { sent: DialectRequest; rewritten: boolean },
  auxiliary: string | null,
): Promise<Recorded | null> {
  const { trace, model, sampling, client } = session.options;
  // usage of streamed calls is asked for, unless the provider said it takes no such option
  const asksUsage = !ctx.refuseStreamUsage.has(client);
  // the provider's dialect: the program's own when served, else the call is translated (as
  // is a request a hook rewrote in a dialect that cannot say it again: call_hooks.ts)
  const provider = providerDialect(dialect, ctx.providerDialects, rewritten);
  const translated = provider !== dialect;
  const options = { streamUsage: asksUsage };
  const refused = ctx.providerImages ? null : imageRefusal(request);
  const prepared = refused ??
    (translated
      ? translateRequest(dialect, provider, request, model, sampling, options)
      : dialect.prepare(request, model, sampling, options));
  const entry: InFlight = {
    call: {
      node: null,
      model,
      sampling: typeof prepared === "string"
        ? dialect.prepare(request, model, sampling, options).sampling
        : prepared.sampling,
      endpoint: dialect.endpoint,
      finish_reason: null,
      usage: null,
      time: { start: now(), end: 0 },
      error: null,
      ...(auxiliary !== null ? { auxiliary } : {}),
    },
    recorded: false,
  };
  session.inFlight.add(entry);
  const call = entry.call;
  const sendError_ = (status: number, message: string, type?: string, code?: string) =>
    sendError(reply, dialect, status, message, type, code);
  const relayError = (err: ProviderError) => {
    const status = err.statusCode ?? 502;
    sendJson(reply, status, dialect.errorBody(err.message, "provider_error", null, status));
  };

  const fail = (err: ProviderError) => {
    if (session.closed) return;
    if (auxiliary === null) session.providerError = err;
    ctx.log("warn", `model call of trace ${trace.id} failed: ${err.message}`);
    session.finish(entry, traceErrorRecord("ProviderError", err.message, err.statusCode ?? null));
  };
  const commit = (outcome: DialectOutcome, finish?: TraceFinishReason) => {
    if (session.closed) return;
    call.finish_reason = finish ??
      (provider.finishReason ?? normalizeFinishReason)(outcome.finishReason);
    if (outcome.finishReason !== null && call.finish_reason === null) {
      call.native_finish_reason = outcome.finishReason;
    }
    call.usage = outcome.usage;
    call.node = commitTurn(trace.nodes, request.messages, outcome.message);
    consumePrepared(session.prepared, request.messages);
    if (upstream.tools !== null) trace.tools = upstream.tools;
    session.finish(entry);
  };
  const closedMidway = (): null => {
    session.finish(entry, closedError());
    if (!reply.headersSent) sendError_(409, "rollout session is closed");
    else reply.destroy();
    return null;
  };
  // the task's response hooks and stops (call_hooks.ts), before the program gets the answer
  const held = responseHooks(
    { ctx, session, entry, dialect, provider, model, reply, commit },
    auxiliary,
  );

  // A new attempt clears the last one's error: only an error that no later call
  // repaired fails the rollout (verifiers/v1/interception/server.py@a60a606).
  if (auxiliary === null) session.providerError = null;
  if (typeof prepared === "string") {
    // never sent with the part dropped: the program hears why, the rollout fails with it
    fail(new ProviderError(prepared, 400));
    const code = refused !== null ? "unsupported_content" : "untranslatable_request";
    sendError_(400, prepared, "invalid_request_error", code);
    return null;
  }
  let upstream: UpstreamCall = prepared;
  let response: ProviderResponse;
  const headers = upstreamHeaders(provider, req.headers, trace.id);
  const send = () =>
    client.send({
      path: provider.endpoint,
      body: upstream.body,
      headers,
      auth: (key) => provider.upstreamAuth?.(key) ?? { authorization: `Bearer ${key}` },
      // a program that closed its connection cancels the upstream call
      signal: anySignal([session.abort.signal, reply.gone]),
    });
  try {
    response = await send();
    const refusable = upstream.stream && asksUsage && provider.refusedStreamUsage !== undefined;
    if (refusable && response.status >= 400) {
      const text = response.kind === "json" ? response.text : await drain(response);
      if (provider.refusedStreamUsage!(response.status, text)) {
        // the provider rejects the option: say so once and stream without it from now on
        if (!ctx.refuseStreamUsage.has(client)) {
          ctx.log(
            "warn",
            "the provider refuses stream_options: streamed calls are sent without it " +
              "(their token usage is then not recorded)",
          );
        }
        ctx.refuseStreamUsage.add(client);
        upstream = provider.withoutStreamUsage?.(upstream) ?? upstream;
        response = await send();
      } else response = { ...response, kind: "json", text, json: parseJsonOrNull(text) };
    }
  } catch (err) {
    if (session.closed) return closedMidway();
    const perr = err instanceof ProviderError
      ? err
      : new ProviderError(`model call failed: ${err instanceof Error ? err.message : err}`, 502);
    fail(perr);
    relayError(perr);
    return null;
  }

  try {
    if (response.status < 200 || response.status >= 300) {
      // Scrubbed before it is recorded or relayed: a provider may echo the key back.
      const text = redact(response.kind === "json" ? response.text : await drain(response));
      const message = provider.errorMessage(text);
      if (provider.isContextLengthError(response.status, message)) {
        if (!session.closed) {
          session.stop("context_length");
          session.finish(entry, traceErrorRecord("ProviderError", message, response.status));
        }
        sendError_(
          400,
          "rollout stopped: context_length",
          "invalid_request_error",
          "context_length_exceeded",
        );
        return null;
      }
      fail(
        new ProviderError(`provider returned HTTP ${response.status}: ${message}`, response.status),
      );
      if (translated) {
        // the provider's error in the program's own error body
        const type = response.status >= 500 ? "server_error" : "invalid_request_error";
        sendJson(reply, response.status, dialect.errorBody(message, type, null, response.status));
      } else if (!reply.headersSent && !reply.finished) {
        reply.head(response.status, {
          ...relayHeaders(response.headers),
          "content-type": response.headers["content-type"] ?? "application/json",
        });
        reply.end(text);
      }
      return null;
    }

    if (upstream.stream !== (response.kind === "stream")) {
      // Python v1 reads a reply of the other kind as malformed (a 502 the program's SDK
      // may retry), never as the program's failure.
      if (response.kind === "stream") response.cancel();
      const err = new ProviderError(
        upstream.stream
          ? "malformed upstream response: the provider answered a streaming request with " +
            `${response.headers["content-type"] || "no content type"}, not text/event-stream`
          : "malformed upstream response: the provider streamed (text/event-stream) a reply " +
            "to a request that did not ask for a stream",
        502,
      );
      fail(err);
      relayError(err);
      return null;
    }

    if (response.kind === "json") {
      const outcome = provider.parseResponse(response.json);
      if (!outcome) {
        const err = new ProviderError(
          provider.unanswered?.(response.json) ?? "provider returned a completion without choices",
          502,
        );
        fail(err);
        relayError(err);
        return null;
      }
      const headers = { ...relayHeaders(response.headers), "content-type": "application/json" };
      if (held) {
        const done = await held.json(outcome, translated, response.status, headers, closedMidway);
        if (done !== "unchanged") return done;
      }
      if (translated) {
        const { rendered, recorded } = translatedAnswer(dialect, provider, model, outcome);
        commit(recorded);
        const body = redact(JSON.stringify(rendered));
        sendJson(reply, response.status, body, headers);
        return { status: response.status, headers, body };
      }
      commit(outcome);
      const text = redact(response.text);
      // A harness in this process takes the parsed body rather than parse it again: the
      // record holds none of it (lib/dialects/chat/codec.ts chatToMessage copies what it
      // keeps), and nothing was scrubbed from the text, so it is what the text parses to.
      if (text === response.text) reply.offerParsed?.(response.json);
      sendJson(reply, response.status, text, headers);
      return { status: response.status, headers, body: text };
    }

    const terminalEvent = provider.terminalEvent ?? "its terminal event";
    const stream: StreamCall = {
      reply,
      session,
      response,
      commit,
      fail,
      closedMidway,
      terminalEvent,
      ...(held ? { hold: (read: DialectOutcome) => held.stream(read, closedMidway) } : {}),
    };
    if (!translated || !dialect.streamRenderer) {
      return await relayStream(stream, provider.streamReader(upstream.relayUsage));
    }
    const { translation, reader } = streamTranslation(dialect, provider, model);
    return await relayStream(stream, reader, translation);
  } catch (err) {
    if (session.closed) return closedMidway();
    throw err;
  } finally {
    // Anything not recorded yet (an unexpected throw) still becomes a ModelCall.
    if (!entry.recorded && !session.closed) {
      session.finish(entry, traceErrorRecord("InterceptionError", "model call did not complete"));
    }
  }
}
