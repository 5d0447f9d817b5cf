/**
 * Which headers cross the interception boundary: the program's request headers forwarded
 * upstream (never its credentials, hop-by-hop headers or SDK retry counters; the trace id
 * added as `x-session-id`) and the provider's response headers relayed back.
 *
 * @module
 */
import type { Dialect } from "../../kit/wire/dialect.ts";

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

/** The provider's response headers that go back to the program. */
export function relayHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of Object.keys(headers)) if (!DROP_RESPONSE_HEADERS.has(k)) out[k] = headers[k]!;
  return out;
}

/** The program's request headers (lower-case names) that go upstream, plus the trace id. */
export function forwardHeaders(
  headers: Readonly<Record<string, string>>,
  traceId: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(headers)) {
    if (!DROP_REQUEST_HEADERS.has(key)) out[key] = headers[key]!;
  }
  out["x-session-id"] = traceId;
  return out;
}

/**
 * The headers of one upstream call: the dialect's own defaults (an API version), then the
 * program's headers as {@link forwardHeaders} keeps them, then the trace id.
 */
export function upstreamHeaders(
  dialect: Dialect,
  headers: Readonly<Record<string, string>>,
  traceId: string,
): Record<string, string> {
  const forwarded = forwardHeaders(headers, traceId);
  return dialect.upstreamHeaders ? { ...dialect.upstreamHeaders, ...forwarded } : forwarded;
}

/** The bearer token of a request's `authorization` header, or null. */
export function bearer(headers: Readonly<Record<string, string>>): string | null {
  const auth = headers["authorization"];
  const m = typeof auth === "string" ? /^Bearer\s+(.+)$/i.exec(auth.trim()) : null;
  return m ? m[1]!.trim() : null;
}

/**
 * The rollout's secret: an `x-api-key` header (as Anthropic's SDKs send keys) or else a
 * bearer token (as OpenAI's SDKs do, and Anthropic's with an auth token); null if neither.
 */
export function rolloutSecret(headers: Readonly<Record<string, string>>): string | null {
  const key = headers["x-api-key"]?.trim();
  return key ? key : bearer(headers);
}
