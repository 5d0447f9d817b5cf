/**
 * The task's interception hooks at the two points of a model call (call.ts): the request,
 * after the limits and stops and before anything goes upstream (a rewrite is what is sent and
 * recorded, a request stop records the prompt and refuses the call), and the answer, before
 * the program gets it (a rewrite is rendered in the program's dialect, a response stop
 * records the turn and answers the dialect's `rollout stopped` error). A hook that fails fails
 * the rollout with its `TaskError` and the program gets a 502, as in Python v1
 * (verifiers/v1/interception/server.py@a60a606).
 *
 * @module
 */
import { TaskError, traceErrorRecord } from "../../kit/errors.ts";
import type {
  Dialect,
  DialectOutcome,
  DialectRequest,
  TraceFinishReason,
} from "../../kit/wire/dialect.ts";
import type { Message } from "../../kit/trace/types.ts";
import { normalizeFinishReason } from "../dialects/chat/codec.ts";
import { addMessages } from "./graph.ts";
import { consumePrepared, interceptRequest, interceptResponse } from "./hooks.ts";
import type { InFlight, Recorded, Session } from "./session.ts";
import { programOutcome, providerDialect, recordedOutcome, renderMeta } from "./translate.ts";
import { sendJson, type WireReply } from "../../kit/wire/http.ts";
import { redact } from "../../kit/secrets.ts";
import type { ServerContext } from "./call.ts";

type Fail = (status: number, message: string, type?: string) => void;

/** A hook failed: the rollout fails with its `TaskError`, the program gets a 502. */
function hookFailed(ctx: ServerContext, session: Session, err: unknown, fail: Fail): void {
  const e = err instanceof TaskError ? err : new TaskError(String(err));
  session.hookError ??= e;
  ctx.log("warn", `an interception hook of trace ${session.options.trace.id} failed: ${e.message}`);
  fail(502, e.message, "server_error");
}

/**
 * Runs the request hooks and stops. Returns the request to send (and whether it must go
 * translated, its dialect having no `rewriteRequest`), or null when the call was answered.
 */
export async function requestBoundary(
  ctx: ServerContext,
  dialect: Dialect,
  session: Session,
  request: DialectRequest,
  auxiliary: string | null,
  fail: Fail,
  refuse: (condition: string) => void,
): Promise<{ sent: DialectRequest; rewritten: boolean } | null> {
  // an auxiliary call is no turn of the agent's: the hooks do not see it
  const hooks = auxiliary === null ? session.options.hooks : undefined;
  const unchanged = { sent: request, rewritten: false };
  if (!hooks || (hooks.request.length === 0 && hooks.requestStops.length === 0)) return unchanged;
  const { trace } = session.options;
  const neutral = dialect.neutralRequest?.(request);
  const tools = neutral !== undefined && typeof neutral !== "string" ? neutral.tools : null;
  let verdict;
  try {
    verdict = await interceptRequest(hooks, trace.nodes, {
      messages: request.messages,
      tools: tools ?? (trace.tools.length > 0 ? trace.tools : null),
    }, session.prepared);
  } catch (err) {
    hookFailed(ctx, session, err, fail);
    return null;
  }
  if (session.closed) {
    fail(409, "rollout session is closed");
    return null;
  }
  session.recordRewrites("request", verdict.rewrites);
  if (verdict.stopped !== null) {
    // the prompt is recorded, never sent (Python's `commit_prompt`)
    addMessages(trace.nodes, verdict.value.messages);
    if (tools !== null) trace.tools = tools;
    consumePrepared(session.prepared, verdict.value.messages);
    refuse(verdict.stopped);
    return null;
  }
  if (verdict.rewrites.length === 0) return unchanged;
  const messages: Message[] = verdict.value.messages;
  const own = dialect.rewriteRequest?.(request, messages);
  if (typeof own === "string") {
    hookFailed(ctx, session, new TaskError(`request rewrite failed: ${own}`), fail);
    return null;
  }
  if (own !== undefined) return { sent: own, rewritten: false };
  // said again in another dialect: a request the program's own cannot rewrite is translated
  const via = providerDialect(dialect, ctx.providerDialects, true);
  if (via === dialect || !dialect.neutralRequest) {
    const why = `request rewrite failed: a rewritten ${dialect.id} request is sent as chat ` +
      "completions, which the provider does not serve (client.dialects)";
    hookFailed(ctx, session, new TaskError(why), fail);
    return null;
  }
  return { sent: { ...request, messages }, rewritten: true };
}

/** What {@link responseHooks} needs of one call. */
export interface ResponseCall {
  ctx: ServerContext;
  session: Session;
  entry: InFlight;
  /** The program's dialect, and the one the answer came in. */
  dialect: Dialect;
  provider: Dialect;
  model: string;
  reply: WireReply;
  commit(outcome: DialectOutcome, finish?: TraceFinishReason): void;
}

/** The response hooks of one call, for a JSON answer and for a held stream (relay.ts). */
export interface ResponseHooks {
  /** Sends the answer when the hooks changed it or stopped (its record), else "unchanged". */
  json(
    outcome: DialectOutcome,
    translated: boolean,
    status: number,
    headers: Record<string, string>,
    closedMidway: () => null,
  ): Promise<Recorded | null | "unchanged">;
  /** A held stream's verdict: unchanged, replaced (the events to send), or answered (null). */
  stream(
    read: DialectOutcome,
    closedMidway: () => null,
  ): Promise<"unchanged" | null | { outcome: DialectOutcome; events: string }>;
}

/**
 * The response hooks and stops over one call's answer before the program gets it; null when
 * the session has none (or the call is auxiliary, no turn of the agent's).
 */
export function responseHooks(c: ResponseCall, auxiliary: string | null): ResponseHooks | null {
  const { session, dialect } = c;
  const hooks = auxiliary === null ? session.options.hooks : undefined;
  if (!hooks || (hooks.response.length === 0 && hooks.responseStops.length === 0)) return null;
  const sendError = (status: number, message: string, type?: string, code?: string | null) =>
    sendJson(c.reply, status, dialect.errorBody(message, type, code ?? null, status), {
      "x-should-retry": "false",
    });
  /** The answer as the program gets it: unchanged, another one, or null (answered here). */
  const inspect = async (
    read: DialectOutcome,
    closedMidway: () => null,
  ): Promise<DialectOutcome | "unchanged" | null> => {
    const finish = (c.provider.finishReason ?? normalizeFinishReason)(read.finishReason);
    let verdict;
    try {
      verdict = await interceptResponse(hooks, {
        message: read.message,
        finishReason: finish ?? read.finishReason,
      });
    } catch (err) {
      if (session.closed) return closedMidway();
      const e = err instanceof TaskError ? err : new TaskError(String(err));
      session.finish(c.entry, traceErrorRecord("TaskError", e.message));
      hookFailed(c.ctx, session, e, sendError);
      return null;
    }
    if (session.closed) return closedMidway();
    const changed = verdict.rewrites.length > 0;
    const out: DialectOutcome = changed
      ? { ...read, message: verdict.value.message, finishReason: "stop" }
      : read;
    if (verdict.stopped !== null) {
      // the turn is recorded; the program never gets it (Python's response `@stop`)
      c.commit(out, changed ? "stop" : undefined);
      session.recordRewrites("response", verdict.rewrites);
      session.stop(verdict.stopped);
      sendError(
        400,
        `rollout stopped: ${verdict.stopped}`,
        "invalid_request_error",
        "rollout_stopped",
      );
      return null;
    }
    if (!changed) return "unchanged";
    session.recordRewrites("response", verdict.rewrites);
    return out;
  };
  return {
    async json(outcome, translated, status, headers, closedMidway) {
      const meta = renderMeta(dialect, c.model);
      const read = translated
        ? recordedOutcome(
          dialect,
          dialect.renderResponse(programOutcome(c.provider, outcome), meta),
          outcome,
        )
        : outcome;
      const held = await inspect(read, closedMidway);
      if (held === null || held === "unchanged") return held;
      c.commit(held, "stop");
      const body = redact(JSON.stringify(dialect.renderResponse(held, meta)));
      sendJson(c.reply, status, body, headers);
      return { status, headers, body };
    },
    async stream(read, closedMidway) {
      const held = await inspect(read, closedMidway);
      if (held === null || held === "unchanged") return held;
      return {
        outcome: held,
        events: dialect.renderStream(held, renderMeta(dialect, c.model)).join(""),
      };
    },
  };
}
