/**
 * A dialect's side request that is no model turn (a route with `relay`, e.g. Anthropic's
 * `POST /v1/messages/count_tokens`): the program's JSON goes to the same path under the
 * provider's base URL with the run's model and the dialect's auth, and the provider's
 * answer comes back with its status, secrets scrubbed. Nothing is recorded on the trace
 * and no limit counts it, as in Python v1 (verifiers/v1/interception/server.py@a60a606,
 * `handle_aux`).
 *
 * @module
 */
import { ProviderError } from "../../kit/errors.ts";
import { isRecord } from "../../kit/util/is_record.ts";
import { redact } from "../../kit/secrets.ts";
import type { Dialect } from "../../kit/wire/dialect.ts";
import { sendJson, type WireReply, type WireRequest } from "../../kit/wire/http.ts";
import { drain, MAX_BODY_BYTES, sendError, type ServerContext } from "./call.ts";
import { relayHeaders, upstreamHeaders } from "./headers.ts";
import type { Session } from "./session.ts";

const decoder = new TextDecoder();

/** Relays one side request of `session` to the provider; records nothing. */
export async function handlePassthrough(
  ctx: ServerContext,
  dialect: Dialect,
  req: WireRequest,
  reply: WireReply,
  session: Session,
): Promise<void> {
  const raw = await req.body(MAX_BODY_BYTES);
  if (raw === null) return sendError(reply, dialect, 413, "request body too large");
  let json: unknown;
  try {
    json = JSON.parse(decoder.decode(raw));
  } catch {
    return sendError(reply, dialect, 400, "We could not parse the JSON body of your request.");
  }
  if (!isRecord(json)) return sendError(reply, dialect, 400, "the body must be a JSON object");
  if (session.closed) return sendError(reply, dialect, 409, "rollout session is closed");
  const { trace, model, client } = session.options;
  try {
    const response = await client.send({
      path: req.path,
      body: { ...json, model },
      headers: upstreamHeaders(dialect, req.headers, trace.id),
      auth: (key) => dialect.upstreamAuth?.(key) ?? { authorization: `Bearer ${key}` },
      signal: session.abort.signal,
    });
    const text = redact(response.kind === "json" ? response.text : await drain(response));
    const headers = {
      ...relayHeaders(response.headers),
      "content-type": response.headers["content-type"] ?? "application/json",
    };
    if (reply.headersSent || reply.finished) return;
    reply.head(response.status, headers);
    reply.end(text);
  } catch (err) {
    if (session.closed) return sendError(reply, dialect, 409, "rollout session is closed");
    const perr = err instanceof ProviderError
      ? err
      : new ProviderError(`side request failed: ${err instanceof Error ? err.message : err}`, 502);
    ctx.log("warn", `a side request of trace ${trace.id} failed: ${perr.message}`);
    const status = perr.statusCode ?? 502;
    sendJson(reply, status, dialect.errorBody(perr.message, "provider_error", null, status));
  }
}
