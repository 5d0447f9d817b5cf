/**
 * The Connect protocol over `fetch` (as the Prime SDK's connectrpc client speaks it): unary calls with
 * `application/proto` bodies and JSON errors, and server-streaming calls with
 * `application/connect+proto` 5-byte envelopes ending in a JSON end-stream envelope
 * (flag 0x02). Deadlines travel in `Connect-Timeout-Ms`. No HTTP trailers are needed,
 * so this works over HTTP/1.1 on Deno, Bun and Node alike.
 *
 * @module
 */
import {
  COMPRESSED_FLAG,
  encodeEnvelope,
  END_STREAM_FLAG,
  EnvelopeReader,
} from "../../../kit/mod.ts";
import { PrimeApiError, PrimeConnectError } from "./errors.ts";
import {
  bodyJson,
  bodyText,
  type FetchLike,
  type HttpRequest,
  sendOnce,
  sendStreaming,
  streamReadError,
  urlPath,
} from "./http.ts";

/** Options of a Connect call. */
export interface ConnectCallOptions {
  fetch: FetchLike;
  /** Full URL: `<gateway base>/<package.Service>/<Method>`. */
  url: string;
  /** Bearer token (the sandbox's gateway token). */
  token: string;
  /** The encoded request message. */
  request: Uint8Array;
  /** Server-side deadline, sent as `Connect-Timeout-Ms`. */
  timeoutMs: number;
  /** Extra client-side slack before the local timeout fires. @default 5000 */
  graceMs?: number;
  signal?: AbortSignal;
  userAgent?: string;
}

/** Connect code for an HTTP status when the body carries none (Connect spec mapping). */
function codeForHttpStatus(status: number): string {
  switch (status) {
    case 400:
      return "internal";
    case 401:
      return "unauthenticated";
    case 403:
      return "permission_denied";
    case 404:
      return "unimplemented";
    case 408:
      return "deadline_exceeded";
    case 409:
      return "aborted";
    case 429:
    case 502:
    case 503:
    case 504:
      return "unavailable";
    default:
      return "unknown";
  }
}

function errorFromBody(
  status: number,
  json: unknown,
  text: string,
  method: string,
  path: string,
): PrimeConnectError {
  const j = (json && typeof json === "object" ? json : {}) as Record<string, unknown>;
  const gatewayCode = typeof j.error === "string" ? j.error : null;
  let code = typeof j.code === "string" ? j.code : codeForHttpStatus(status);
  if (gatewayCode === "sandbox_not_found") code = "not_found";
  const message = typeof j.message === "string"
    ? j.message
    : typeof j.detail === "string"
    ? j.detail
    : text.slice(0, 300);
  return new PrimeConnectError(`Connect ${code} (HTTP ${status}) at ${path}: ${message}`, {
    transport: "http",
    httpStatus: status,
    detail: message,
    errorCode: gatewayCode,
    method,
    path,
    connectCode: code,
  });
}

function headers(o: ConnectCallOptions, contentType: string): Record<string, string> {
  return {
    "Content-Type": contentType,
    "Connect-Protocol-Version": "1",
    "Connect-Timeout-Ms": String(Math.max(1, Math.round(o.timeoutMs))),
    "Authorization": `Bearer ${o.token}`,
    "User-Agent": o.userAgent ?? "verifiers-ts",
  };
}

/** A unary Connect call; resolves to the response message bytes. */
export async function connectUnary(o: ConnectCallOptions): Promise<Uint8Array> {
  const req: HttpRequest = {
    method: "POST",
    url: o.url,
    headers: headers(o, "application/proto"),
    body: () => o.request as BodyInit,
    timeoutMs: o.timeoutMs + (o.graceMs ?? 5000),
    ...(o.signal === undefined ? {} : { signal: o.signal }),
  };
  const res = await sendOnce(o.fetch, req);
  if (res.status !== 200) {
    throw errorFromBody(res.status, bodyJson(res), bodyText(res), "POST", urlPath(o.url));
  }
  return res.body;
}

/**
 * A server-streaming Connect call: yields each response message's bytes, then returns when
 * the end-stream envelope arrives without an error. An end-stream error becomes a
 * {@link PrimeConnectError}; a stream that breaks off before its end-stream envelope is a
 * network {@link PrimeApiError} (phase `read`).
 */
export async function* connectServerStream(
  o: ConnectCallOptions,
): AsyncGenerator<Uint8Array, void, undefined> {
  const path = urlPath(o.url);
  const req: HttpRequest = {
    method: "POST",
    url: o.url,
    headers: headers(o, "application/connect+proto"),
    body: () => encodeEnvelope(0, o.request) as BodyInit,
    timeoutMs: o.timeoutMs + (o.graceMs ?? 5000),
    ...(o.signal === undefined ? {} : { signal: o.signal }),
  };
  const res = await sendStreaming(o.fetch, req);
  try {
    if (res.status !== 200) {
      let bytes = new Uint8Array(0);
      try {
        bytes = new Uint8Array(await new Response(res.body).arrayBuffer());
      } catch {
        // keep what we have
      }
      const text = new TextDecoder().decode(bytes);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      throw errorFromBody(res.status, json, text, "POST", path);
    }
    if (!res.body) throw noEnd(path);
    const reader = res.body.getReader();
    const frames = new EnvelopeReader();
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (e) {
        throw streamReadError(req, e, res.timedOut());
      }
      if (chunk.done) break;
      for (const f of frames.push(chunk.value)) {
        if ((f.flags & END_STREAM_FLAG) !== 0) {
          const end = parseEndStream(f.data);
          if (end.error) {
            throw new PrimeConnectError(
              `Connect ${end.error.code} at ${path}: ${end.error.message}`,
              {
                transport: "http",
                httpStatus: 200,
                detail: end.error.message,
                method: "POST",
                path,
                connectCode: end.error.code,
              },
            );
          }
          return;
        }
        if ((f.flags & COMPRESSED_FLAG) !== 0) {
          throw new PrimeConnectError(`Connect internal at ${path}: compressed message`, {
            transport: "http",
            httpStatus: 200,
            detail: "compressed message received without negotiation",
            method: "POST",
            path,
            connectCode: "internal",
          });
        }
        yield f.data;
      }
    }
    throw noEnd(path);
  } finally {
    res.close();
  }
}

function noEnd(path: string): PrimeApiError {
  return new PrimeApiError(`Request failed: the Connect stream at ${path} ended early`, {
    transport: "network",
    phase: "read",
    method: "POST",
    path,
  });
}

/** Parses the JSON of an end-stream envelope. */
function parseEndStream(
  data: Uint8Array,
): { error?: { code: string; message: string } } {
  let j: unknown;
  try {
    j = JSON.parse(new TextDecoder().decode(data) || "{}");
  } catch {
    return { error: { code: "internal", message: "unreadable end-of-stream message" } };
  }
  const e = (j as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  if (!e) return {};
  return {
    error: {
      code: typeof e.code === "string" ? e.code : "unknown",
      message: typeof e.message === "string" ? e.message : "",
    },
  };
}
