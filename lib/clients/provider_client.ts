/**
 * The provider client: one upstream (`POST {baseUrl}/chat/completions`, or the path of the
 * program's dialect). Auth from an environment variable (Bearer, or the dialect's header),
 * extra headers, a connect timeout and a stall timeout (no byte from the provider for that
 * long fails the call; a long generation that keeps sending is never cut), streaming
 * bodies, AbortSignal. No retries, except one: a call whose pooled keep-alive connection the
 * provider closed before answering is sent once more on a new connection.
 *
 * Transport failures throw a {@link ProviderError}: 503 transport, 504 connect timeout or
 * stall, 502 malformed JSON. HTTP error statuses are returned, not thrown, so a relay can pass
 * them on. The API key never appears in an error.
 *
 * The transport is `./http1/` (HTTP/1.1 over `node:net`/`node:tls` with its own keep-alive
 * pool), not `node:http` or `fetch`: per request it takes about half the CPU of `node:http`
 * on Bun and less than either on Deno (`bench/upstream.ts`), it keeps a connect timeout, and
 * it tells a reused connection's failure apart.
 *
 * @module
 */
import { ProviderError } from "../../kit/errors.ts";
import { getEnv } from "../../kit/_runtime/env.ts";
import { concatBytes } from "../../kit/util/bytes.ts";
import { addSecret, MASK, maskUrl, redact as redactSecrets } from "../../kit/secrets.ts";
import { ConnectionPool, type Http1Origin } from "./http1/connection_pool.ts";
import {
  exchange,
  type Http1Exchange,
  Http1RequestError,
  type Http1Response,
} from "./http1/exchange.ts";
import { requestBytes } from "./http1/request_bytes.ts";
import type { ProviderClient, ProviderRequest, ProviderResponse } from "./provider_types.ts";
import { StallClock, StallWatch } from "./stall_watch.ts";

/** Options of {@link createProviderClient}. */
export interface ProviderClientOptions {
  /** Base URL of the OpenAI-compatible API, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Name of the environment variable holding the API key. @default none (key "EMPTY") */
  apiKeyVar?: string | null;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
  /** Environment to read the key from instead of the process environment. */
  env?: Record<string, string | undefined>;
  /** Time allowed to open the connection (TCP + TLS). @default 5000 */
  connectTimeoutMs?: number;
  /**
   * Longest silence allowed from the provider during one call — before the response
   * headers and between body chunks; null waits forever. @default {@link DEFAULT_STALL_TIMEOUT_S} s
   */
  stallTimeoutMs?: number | null;
  /** Largest reply body read (JSON, error or stream); a longer one fails the call. @default {@link MAX_RESPONSE_BYTES} */
  maxResponseBytes?: number;
}

/** Default cap on one reply's body: 64 MiB (a reply past it is a 502 `ProviderError`). */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** Default of `client.stall_timeout`: seconds without a byte from the provider before a call fails. */
export const DEFAULT_STALL_TIMEOUT_S = 600;

/** `client.stall_timeout` (seconds, null = none, absent = the default) in milliseconds. */
export function stallMs(seconds: number | null | undefined): number | null {
  if (seconds === undefined) return DEFAULT_STALL_TIMEOUT_S * 1000;
  return seconds === null ? null : seconds * 1000;
}

export type {
  ProviderClient,
  ProviderJsonResponse,
  ProviderRequest,
  ProviderResponse,
  ProviderStreamResponse,
} from "./provider_types.ts";

/**
 * Joins a base URL and a path without doubling a version segment
 * (`.../v1` + `/v1/chat/completions` → `.../v1/chat/completions`).
 */
export function joinUrl(baseUrl: string, path: string): string {
  const base = baseUrl.replace(/\/+$/, "");
  let rest = path.startsWith("/") ? path : `/${path}`;
  const version = /\/(v\d+[a-z0-9]*)$/i.exec(base)?.[1];
  if (version && rest.toLowerCase().startsWith(`/${version.toLowerCase()}/`)) {
    rest = rest.slice(version.length + 1);
  }
  return base + rest;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The failure of a reply longer than the client reads. */
function tooLarge(url: string, maxBytes: number): ProviderError {
  return new ProviderError(
    `provider reply from ${url} is larger than ${maxBytes} bytes; the call was cut off`,
    502,
    { hint: "the endpoint does not look like an OpenAI-compatible API" },
  );
}

function describeTransport(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" && !err.message.includes(code)
      ? `${code}: ${err.message}`
      : err.message;
  }
  return String(err);
}

function abortReason(signal: AbortSignal): Error {
  const reason = signal.reason;
  return reason instanceof Error
    ? reason
    : new DOMException("The request was aborted", "AbortError");
}

/** Removes the key and every registered secret from a message. */
function redact(message: string, secret: string): string {
  const text = redactSecrets(message);
  return secret && secret !== "EMPTY" ? text.split(secret).join(MASK) : text;
}

async function* readBody(
  res: Http1Response,
  url: string,
  key: string,
  signal: AbortSignal | undefined,
  watch: StallWatch,
  maxBytes: number,
  drop: (reason: Error) => void,
  done: () => void = () => {},
): AsyncGenerator<Uint8Array> {
  let size = 0;
  try {
    watch.touch();
    for await (const bytes of res.body) {
      watch.touch();
      size += bytes.byteLength;
      if (size > maxBytes) throw tooLarge(url, maxBytes);
      yield bytes;
    }
  } catch (err) {
    if (signal?.aborted) throw abortReason(signal);
    if (err instanceof ProviderError) throw err;
    if (watch.stalled) {
      throw new ProviderError(redact(watch.message(url), key), 504, {
        hint: "the provider stopped sending; raise client.stall_timeout (null waits forever)",
      });
    }
    throw new ProviderError(
      redact(`provider response from ${url} broke off: ${describeTransport(err)}`, key),
      503,
      {
        hint: "the provider dropped the connection mid-response; the program may retry",
        cause: err,
      },
    );
  } finally {
    watch.done();
    if (!res.complete) drop(new Error("the reader stopped"));
    done();
  }
}

/** A request path's URL, as parsed, as shown in messages, and its origin. */
interface Route {
  url: string;
  parsed: URL;
  origin: Http1Origin;
}

/** Creates a {@link ProviderClient}. */
export function createProviderClient(options: ProviderClientOptions): ProviderClient {
  const baseUrl = options.baseUrl;
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const stallTimeoutMs = options.stallTimeoutMs === undefined
    ? DEFAULT_STALL_TIMEOUT_S * 1000
    : options.stallTimeoutMs;
  const keyVar = options.apiKeyVar ?? null;
  let keyRead: string | null = null;
  /** The key, read from its variable at the first call (not again on every call). */
  const readKey = (): string => {
    if (keyRead !== null) return keyRead;
    const value = keyVar ? (options.env ? options.env[keyVar] : getEnv(keyVar)) : undefined;
    return keyRead = value ? value : "EMPTY";
  };
  const pool = new ConnectionPool(connectTimeoutMs);
  const clock = stallTimeoutMs === null ? null : new StallClock(stallTimeoutMs);

  /** Where a path goes, worked out once per path. */
  const routes = new Map<string, Route>();
  const routeFor = (path: string): Route => {
    let route = routes.get(path);
    if (route === undefined) {
      const target = joinUrl(baseUrl, path);
      const parsed = new URL(target);
      const secure = parsed.protocol === "https:";
      route = {
        url: maskUrl(target), // as shown in messages: without userinfo
        parsed,
        origin: {
          secure,
          hostname: parsed.hostname.replace(/^\[|\]$/g, ""),
          port: Number(parsed.port) || (secure ? 443 : 80),
        },
      };
      if (routes.size < 64) routes.set(path, route);
    }
    return route;
  };
  let registeredKey = "";

  const send = (request: ProviderRequest): Promise<ProviderResponse> => {
    const { url, parsed, origin } = routeFor(request.path ?? "/chat/completions");
    const key = readKey();
    if (key !== registeredKey) {
      addSecret(key);
      registeredKey = key;
    }
    if (!origin.secure && parsed.protocol !== "http:") {
      return Promise.reject(
        new ProviderError(`unsupported provider URL scheme: ${parsed.protocol}`, 503, {
          hint: "use an http:// or https:// base URL",
        }),
      );
    }
    const payload = request.body instanceof Uint8Array
      ? request.body
      : encoder.encode(JSON.stringify(request.body));
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
      "accept-encoding": "identity",
    };
    for (const source of [request.headers, options.headers]) {
      if (source !== undefined) {
        for (const k of Object.keys(source)) headers[k.toLowerCase()] = source[k]!;
      }
    }
    if (request.auth === undefined) headers["authorization"] = `Bearer ${key}`;
    else {
      const auth = request.auth(key);
      for (const k of Object.keys(auth)) headers[k.toLowerCase()] = auth[k]!;
    }
    let bytes: Uint8Array;
    try {
      bytes = requestBytes(parsed, headers, payload);
    } catch (err) {
      return Promise.reject(
        new ProviderError(redact(`cannot send to ${url}: ${(err as Error).message}`, key), 400, {
          hint: "check client.headers and the program's request headers",
        }),
      );
    }
    const signal = request.signal;
    if (signal?.aborted) return Promise.reject(abortReason(signal));

    return new Promise<ProviderResponse>((resolve, reject) => {
      let settled = false;
      let current: Http1Exchange;
      const watch = new StallWatch(clock, stallTimeoutMs ?? 0, () => {
        const err = new Error(watch.message(url));
        if (!settled) {
          fail(
            new ProviderError(redact(watch.message(url), key), 504, {
              hint: "the provider never answered; raise client.stall_timeout (null waits forever)",
            }),
          );
        }
        current.destroy(err);
      });
      const fail = (err: unknown) => {
        watch.done();
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        reject(err);
      };
      const onAbort = () => {
        const reason = abortReason(signal!);
        fail(reason);
        current.destroy(reason);
      };
      const attempt = (fresh: boolean) => {
        current = exchange(pool, origin, bytes, fresh);
        current.response.then(onResponse, (err: unknown) => onError(err, fresh));
      };
      const onError = (err: unknown, fresh: boolean) => {
        if (signal?.aborted) return fail(abortReason(signal));
        if (watch.stalled || settled) return; // already failed
        const failure = err instanceof Http1RequestError ? err : null;
        if (
          !fresh && failure !== null && failure.reused && !failure.responseStarted &&
          !failure.connectTimedOut
        ) {
          // A pooled keep-alive connection the provider closed before answering (its idle
          // timeout crossing our reuse, common when calls wait seconds apart on a loaded
          // machine): send the call once more on a connection of its own; a second failure
          // is the provider's.
          return attempt(true);
        }
        const timedOut = failure?.connectTimedOut === true;
        const what = timedOut ? "timed out connecting to" : "could not reach";
        fail(
          new ProviderError(
            redact(`${what} ${url}: ${describeTransport(failure ?? err)}`, key),
            timedOut ? 504 : 503,
            { hint: "check the endpoint base URL and that the provider is up", cause: err },
          ),
        );
      };
      const onResponse = (res: Http1Response) => {
        if (settled) return current.destroy(new Error("the call already ended"));
        watch.touch();
        const status = res.status;
        const type = res.headers["content-type"] ?? "";
        const drop = (reason: Error) => current.destroy(reason);
        if (type.includes("text/event-stream")) {
          settled = true; // onAbort stays on until the stream ends: it drops the connection
          const done = () => signal?.removeEventListener("abort", onAbort);
          const body = readBody(res, url, key, signal, watch, maxResponseBytes, drop, done);
          const cancel = () => {
            watch.done();
            done();
            drop(new Error("the stream was cancelled"));
          };
          resolve({ kind: "stream", status, headers: res.headers, body, cancel });
          return;
        }
        const settle = (parts: Uint8Array[]) => {
          const text = decoder.decode(parts.length === 1 ? parts[0]! : concatBytes(parts));
          let json: unknown = null;
          try {
            json = text.trim() === "" ? null : JSON.parse(text);
          } catch {
            if (status >= 200 && status < 300) {
              throw new ProviderError(
                `provider at ${url} answered HTTP ${status} with malformed JSON`,
                502,
                { hint: "the endpoint does not look like an OpenAI-compatible API" },
              );
            }
          }
          if (settled) return;
          settled = true;
          signal?.removeEventListener("abort", onAbort);
          resolve({ kind: "json", status, headers: res.headers, text, json });
        };
        // a short reply is usually whole by now (its head and body came in one read)
        const whole = res.takeBodyIfComplete();
        if (whole !== null) {
          watch.done();
          try {
            let size = 0;
            for (const part of whole) size += part.byteLength;
            if (size > maxResponseBytes) throw tooLarge(url, maxResponseBytes);
            settle(whole);
          } catch (err) {
            fail(err);
          }
          return;
        }
        (async () => {
          const parts: Uint8Array[] = [];
          for await (
            const chunk of readBody(res, url, key, signal, watch, maxResponseBytes, drop)
          ) {
            parts.push(chunk);
          }
          settle(parts);
        })().catch(fail);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      watch.touch();
      attempt(false);
    });
  };

  return {
    baseUrl,
    send,
    chatCompletions: (body, opts = {}) => send({ ...opts, body, path: "/chat/completions" }),
    close() {
      pool.close();
    },
  };
}
