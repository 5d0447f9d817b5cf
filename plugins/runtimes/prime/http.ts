/**
 * One HTTP exchange with the Prime API over `fetch`, and the retry loop around it. Every
 * failure becomes a {@link PrimeApiError} that says how the request failed, so the retry
 * rules (client.ts) are decided on error kinds, never on message text.
 *
 * @module
 */
import { PrimeApiError, type PrimeFailurePhase } from "./errors.ts";
import { sleep } from "../../../kit/mod.ts";

/** A `fetch`-compatible function. */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** One request. */
export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  /** Made fresh for every attempt (a FormData or stream cannot be sent twice). */
  body?: (() => BodyInit | undefined) | undefined;
  /** Whole-exchange timeout (connect, headers and body). */
  timeoutMs: number;
  /** Cancels the request; the signal's reason is thrown as is. */
  signal?: AbortSignal | undefined;
}

/** A response whose body was read completely. */
export interface HttpResponse {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

/** A response whose body is still a stream (Connect server streams). */
export interface HttpStreamResponse {
  status: number;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
  /** Cancels the stream and its timers. */
  close(): void;
}

const decoder = new TextDecoder();

/** The body as text (UTF-8, lenient). */
export function bodyText(r: HttpResponse): string {
  return decoder.decode(r.body);
}

/** The body as JSON, or undefined when it is not JSON. */
export function bodyJson(r: HttpResponse): unknown {
  try {
    return JSON.parse(bodyText(r));
  } catch {
    return undefined;
  }
}

/** The path of a URL, for messages (no query string). */
export function urlPath(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** Decides whether a network failure happened before the request reached the server. */
function failurePhase(err: unknown): PrimeFailurePhase {
  const seen = new Set<unknown>();
  let e: unknown = err;
  while (e && typeof e === "object" && !seen.has(e)) {
    seen.add(e);
    const code = String((e as { code?: unknown }).code ?? "");
    const msg = String((e as { message?: unknown }).message ?? "");
    if (
      /ECONNREFUSED|ConnectionRefused|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH/i.test(code) ||
      /connection refused|ECONNREFUSED|failed to lookup address|dns error|Unable to connect/i
        .test(msg)
    ) {
      return "connect";
    }
    e = (e as { cause?: unknown }).cause;
  }
  return "send";
}

function errName(e: unknown): string {
  return e instanceof Error ? e.name : typeof e;
}

function errMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A timeout controller joined with the caller's signal. */
function deadline(timeoutMs: number, signal?: AbortSignal) {
  const ctrl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctrl.abort(new Error("timeout"));
  }, Math.max(1, timeoutMs));
  const onAbort = () => ctrl.abort(signal?.reason);
  if (signal?.aborted) ctrl.abort(signal.reason);
  else signal?.addEventListener("abort", onAbort, { once: true });
  return {
    signal: ctrl.signal,
    timedOut: () => timedOut,
    done: () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    },
  };
}

/** Turns a failure of fetch (or of reading its body) into a typed error. */
function transportError(
  req: HttpRequest,
  e: unknown,
  timedOut: boolean,
  phase: PrimeFailurePhase,
): unknown {
  if (req.signal?.aborted && !timedOut) return req.signal.reason;
  const path = urlPath(req.url);
  if (timedOut) {
    return new PrimeApiError(
      `Request timed out: ${req.method} ${path} after ${Math.round(req.timeoutMs / 1000)}s`,
      { transport: "timeout", phase, method: req.method, path, cause: e },
    );
  }
  return new PrimeApiError(
    `Request failed: ${errName(e)} at ${req.method} ${path}: ${errMessage(e)}`,
    { transport: "network", phase, method: req.method, path, cause: e },
  );
}

/** Sends `req` under its deadline `d`; a failure to get an answer becomes a typed error. */
async function start(
  fetchImpl: FetchLike,
  req: HttpRequest,
  d: ReturnType<typeof deadline>,
): Promise<Response> {
  try {
    return await fetchImpl(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body?.() ?? null,
      signal: d.signal,
      redirect: "follow",
    });
  } catch (e) {
    throw transportError(req, e, d.timedOut(), d.timedOut() ? "send" : failurePhase(e));
  }
}

/** Sends one request and reads its whole body. Throws only for transport failures. */
export async function sendOnce(fetchImpl: FetchLike, req: HttpRequest): Promise<HttpResponse> {
  if (req.signal?.aborted) throw req.signal.reason;
  const d = deadline(req.timeoutMs, req.signal);
  try {
    const res = await start(fetchImpl, req, d);
    try {
      const body = new Uint8Array(await res.arrayBuffer());
      return { status: res.status, headers: res.headers, body };
    } catch (e) {
      throw transportError(req, e, d.timedOut(), "read");
    }
  } finally {
    d.done();
  }
}

/** Sends one request and hands back the body as a stream (the timeout keeps running). */
export async function sendStreaming(
  fetchImpl: FetchLike,
  req: HttpRequest,
): Promise<HttpStreamResponse & { timedOut(): boolean }> {
  if (req.signal?.aborted) throw req.signal.reason;
  const d = deadline(req.timeoutMs, req.signal);
  let res: Response;
  try {
    res = await start(fetchImpl, req, d);
  } catch (e) {
    d.done();
    throw e;
  }
  return {
    status: res.status,
    headers: res.headers,
    body: res.body,
    timedOut: d.timedOut,
    close: () => {
      d.done();
      res.body?.cancel().catch(() => {});
    },
  };
}

/** Turns a read failure of a streamed body into a typed error (or the caller's abort). */
export function streamReadError(req: HttpRequest, e: unknown, timedOut: boolean): unknown {
  return transportError(req, e, timedOut, "read");
}

/** A retry schedule: attempts in all and the delay before attempt `n+1` (n from 0). */
export interface RetrySchedule {
  attempts: number;
  /** `err` is the failure being retried (some schedules wait longer after some kinds). */
  delayMs(n: number, err?: unknown): number;
}

/**
 * Sends a request under a retry schedule: a 2xx answer is returned; any other becomes the
 * error `errorOf` makes of it, retried (like a transport failure) when `shouldRetry` says so.
 */
export async function sendWithRetries(
  fetchImpl: FetchLike,
  req: HttpRequest,
  retry: { schedule: RetrySchedule; shouldRetry: (err: unknown) => boolean },
  errorOf: (res: HttpResponse) => unknown,
): Promise<HttpResponse> {
  return await withRetries(
    retry.schedule,
    async () => {
      const res = await sendOnce(fetchImpl, req);
      if (res.status >= 200 && res.status < 300) return res;
      throw errorOf(res);
    },
    retry.shouldRetry,
    req.signal,
  );
}

/**
 * Runs `attempt` until it succeeds, `shouldRetry` says no, or the attempts run out. The
 * last error is thrown unchanged. A caller abort is never retried.
 */
export async function withRetries<T>(
  schedule: RetrySchedule,
  attempt: (n: number) => Promise<T>,
  shouldRetry: (err: unknown) => boolean,
  signal?: AbortSignal,
): Promise<T> {
  for (let n = 0;; n++) {
    try {
      return await attempt(n);
    } catch (e) {
      if (signal?.aborted) throw e;
      if (n + 1 >= schedule.attempts || !shouldRetry(e)) throw e;
      await sleep(schedule.delayMs(n, e), signal);
    }
  }
}
