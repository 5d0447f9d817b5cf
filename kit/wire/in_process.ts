/**
 * In-process transport: a loopback server registers its origin and {@link WireHandler};
 * {@link wireFetch} then delivers requests to that origin straight to the handler, without
 * a socket, and answers with a standard `Response` (JSON in one piece, or a stream as the
 * handler writes it). Requests to any other origin go through `fetch`. The server keeps
 * its socket for programs in other processes; the answers are the same either way.
 *
 * @module
 */
import type { WireHandler, WireReply, WireRequest } from "./http.ts";
import { chunksText } from "../util/bytes.ts";
import { loopTurns } from "../util/loop_turn.ts";

const handlers = new Map<string, WireHandler>();
const encoder = new TextEncoder();

/** Serves `origin` (`http://127.0.0.1:<port>`) in-process with `handler`; returns the undo. */
export function serveInProcess(origin: string, handler: WireHandler): () => void {
  const key = new URL(origin).origin;
  handlers.set(key, handler);
  return () => {
    if (handlers.get(key) === handler) handlers.delete(key);
  };
}

/** The origin and path of URLs seen lately: a harness posts to the same URL every turn. */
const parsedUrls = new Map<string, { origin: string; pathname: string }>();

function urlParts(url: string): { origin: string; pathname: string } {
  let parts = parsedUrls.get(url);
  if (parts === undefined) {
    const u = new URL(url);
    parts = { origin: u.origin, pathname: u.pathname };
    if (parsedUrls.size >= 256) parsedUrls.clear(); // bounded: a URL per rollout would not grow it
    parsedUrls.set(url, parts);
  }
  return parts;
}

/** The parts of `RequestInit` {@link wireFetch} takes. */
export interface WireFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/** `fetch`, delivered in-process when a handler serves the URL's origin. */
export function wireFetch(url: string, init: WireFetchInit = {}): Promise<Response> {
  const parsed = urlParts(url);
  const handler = handlers.get(parsed.origin);
  if (handler === undefined) return fetch(url, init as RequestInit);
  return deliver(
    handler,
    parsed.pathname,
    init,
    (resolve, reject) => new ResponseReply(resolve, reject, init.signal),
  );
}

/** A reply read whole: its status, header fields (lower-case names) and body text. */
export interface WireTextReply {
  status: number;
  headers: Record<string, string>;
  text: string;
  /**
   * The body parsed, when the handler in this process had it so (`WireReply.offerParsed`):
   * what `JSON.parse(text)` gives, and the caller's own. Absent otherwise.
   */
  json?: unknown;
}

/**
 * {@link wireFetch} and the reply's text, without a `Response` (nor its body stream) when a
 * handler in this process answers: what a caller that reads every reply whole needs.
 */
export async function wireFetchText(url: string, init: WireFetchInit = {}): Promise<WireTextReply> {
  const parsed = urlParts(url);
  const handler = handlers.get(parsed.origin);
  if (handler === undefined) {
    const res = await fetch(url, init as RequestInit);
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => (headers[name] = value));
    return { status: res.status, headers, text: await res.text() };
  }
  return await deliver(
    handler,
    parsed.pathname,
    init,
    (resolve, reject) => new TextReply(resolve, reject, init.signal),
  );
}

/** Hands `init` as a {@link WireRequest} to `handler`; `replyFor` makes what it answers into. */
function deliver<T>(
  handler: WireHandler,
  path: string,
  init: WireFetchInit,
  replyFor: (resolve: (value: T) => void, reject: (err: unknown) => void) => FailableReply,
): Promise<T> {
  const headers: Record<string, string> = {};
  const given = init.headers;
  if (given !== undefined) {
    for (const k of Object.keys(given)) headers[k.toLowerCase()] = given[k]!;
  }
  const body = typeof init.body === "string" ? encoder.encode(init.body) : init.body;
  const request: WireRequest = {
    method: (init.method ?? "GET").toUpperCase(),
    path,
    headers,
    body: (maxBytes) =>
      Promise.resolve(
        body === undefined ? new Uint8Array() : body.byteLength > maxBytes ? null : body,
      ),
    discard: () => {},
  };
  return handInProcess(handler, request, init.signal, replyFor);
}

/** A {@link WireReply} that also takes its handler's failure. */
export interface FailableReply extends WireReply {
  /** The handler failed: a fetch-like network error (or a broken body once it started). */
  fail(err: unknown): void;
}

/**
 * Runs `handler` on `request` in this process; resolves or rejects as the reply `replyFor`
 * makes does. When the handler returns, a reply it left open is ended (ending twice does
 * nothing); when it throws, the reply fails. A caller looping over in-process calls never
 * waits on I/O, so the event loop first gets a turn when it has gone too long without
 * (kit/util/loop_turn.ts); `signal` is checked after that turn and rejects the call, as
 * `fetch` does.
 */
export function handInProcess<T>(
  handler: WireHandler,
  request: WireRequest,
  signal: AbortSignal | undefined,
  replyFor: (resolve: (value: T) => void, reject: (err: unknown) => void) => FailableReply,
): Promise<T> {
  return loopTurns.whenTurned(() =>
    new Promise<T>((resolve, reject) => {
      signal?.throwIfAborted();
      const reply = replyFor(resolve, reject);
      handler(request, reply).then(() => reply.end(), (err) => reply.fail(err));
    })
  );
}

/**
 * What the in-process replies share: the status and headers, the end, the caller's abort
 * signal (listened to until the reply ends); `T` is what the caller's promise resolves to.
 */
abstract class InProcessReply<T> implements FailableReply {
  protected status = 0;
  protected headers: Record<string, string> = {};
  protected ended = false;
  protected readonly resolve: (value: T) => void;
  protected readonly reject: (err: unknown) => void;
  readonly #signal: AbortSignal | undefined;
  readonly #onAbort = () =>
    this.aborted(this.#signal?.reason ?? new DOMException("aborted", "AbortError"));

  constructor(resolve: (value: T) => void, reject: (err: unknown) => void, signal?: AbortSignal) {
    this.resolve = resolve;
    this.reject = reject;
    this.#signal = signal;
    signal?.addEventListener("abort", this.#onAbort, { once: true });
  }

  get headersSent(): boolean {
    return this.status !== 0;
  }

  get finished(): boolean {
    return this.ended;
  }

  head(status: number, headers: Record<string, string>): void {
    if (this.status !== 0) return;
    this.status = status;
    this.headers = headers;
  }

  abstract write(chunk: string | Uint8Array): void;
  abstract end(chunk?: string | Uint8Array): void;
  abstract fail(err: unknown): void;

  destroy(): void {
    this.fail(new TypeError("terminated: the server cut the response off"));
  }

  /** The caller's signal aborted with `reason`. */
  protected aborted(reason: unknown): void {
    this.fail(reason);
  }

  /** Stops listening to the caller's signal (the reply ended). */
  protected release(): void {
    this.#signal?.removeEventListener("abort", this.#onAbort);
  }
}

/** A {@link WireReply} gathered into one text (see {@link wireFetchText}). */
class TextReply extends InProcessReply<WireTextReply> {
  #parts: (string | Uint8Array)[] = [];
  /** What the handler offered as the parsed body; kept only while the body is its end chunk. */
  #parsed: { value: unknown } | null = null;

  write(chunk: string | Uint8Array): void {
    if (this.ended) return;
    this.#parts.push(chunk);
    this.#parsed = null;
  }

  offerParsed(value: unknown): void {
    if (!this.ended && this.#parts.length === 0) this.#parsed = { value };
  }

  end(chunk?: string | Uint8Array): void {
    if (this.ended) return;
    if (chunk !== undefined) this.#parts.push(chunk);
    this.ended = true;
    this.release();
    const text = chunksText(this.#parts);
    const headers: Record<string, string> = {};
    for (const k of Object.keys(this.headers)) headers[k.toLowerCase()] = this.headers[k]!;
    const reply: WireTextReply = { status: this.status || 200, headers, text };
    if (this.#parsed !== null) reply.json = this.#parsed.value;
    this.resolve(reply);
  }

  fail(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.release();
    this.reject(err);
  }
}

/**
 * A {@link WireReply} that becomes a `Response`: a reply ended without a prior write is
 * one body; the first write before the end turns it into a stream.
 */
class ResponseReply extends InProcessReply<Response> {
  #controller: ReadableStreamDefaultController<Uint8Array> | null = null;
  #resolved = false;

  write(chunk: string | Uint8Array): void {
    if (this.ended) return;
    if (this.#controller === null) this.#open();
    this.#controller!.enqueue(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
  }

  end(chunk?: string | Uint8Array): void {
    if (this.ended) return;
    if (this.#controller === null) {
      this.ended = true;
      this.#resolved = true;
      const status = this.status || 200;
      const nullBody = status === 204 || status === 304;
      this.resolve(
        new Response(nullBody ? null : (chunk ?? "") as BodyInit, {
          status,
          headers: this.headers,
        }),
      );
      this.release();
      return;
    }
    if (chunk !== undefined) this.write(chunk);
    this.ended = true;
    this.#controller.close();
    this.release();
  }

  fail(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    if (this.#controller !== null) this.#controller.error(err);
    else this.reject(err);
    this.release();
  }

  protected override aborted(reason: unknown): void {
    if (!this.#resolved) this.reject(reason);
    this.fail(reason);
  }

  #open(): void {
    const stream = new ReadableStream<Uint8Array>({
      start: (controller) => void (this.#controller = controller),
      cancel: () => void (this.ended = true),
    });
    this.#resolved = true;
    this.resolve(new Response(stream, { status: this.status || 200, headers: this.headers }));
  }
}
