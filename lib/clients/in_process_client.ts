/**
 * A {@link ProviderClient} that calls a {@link WireHandler} in this process (the oracle),
 * with no socket: the handler sees the request the HTTP client would send (path, JSON
 * body, lower-case headers) and its reply becomes the same JSON or stream response.
 *
 * @module
 */
import { ProviderError } from "../../kit/errors.ts";
import { chunksText } from "../../kit/util/bytes.ts";
import type { WireHandler, WireRequest } from "../../kit/wire/http.ts";
import { type FailableReply, handInProcess } from "../../kit/wire/in_process.ts";
import { ChunkQueue } from "./chunk_queue.ts";
import { joinUrl } from "./provider_client.ts";
import type { ProviderClient, ProviderRequest, ProviderResponse } from "./provider_types.ts";

const encoder = new TextEncoder();

/** A reply collected into a {@link ProviderResponse}: a stream once it is `text/event-stream`. */
class CollectingReply implements FailableReply {
  status = 0;
  headers: Record<string, string> = {};
  /** The body of a JSON reply as the handler wrote it: text stays text until it is read. */
  readonly #parts: (string | Uint8Array)[] = [];
  #stream: ChunkQueue | null = null;
  #ended = false;
  readonly #url: string;
  readonly #resolve: (r: ProviderResponse) => void;
  readonly #reject: (e: unknown) => void;

  constructor(url: string, resolve: (r: ProviderResponse) => void, reject: (e: unknown) => void) {
    this.#url = url;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  get headersSent(): boolean {
    return this.status !== 0;
  }

  get finished(): boolean {
    return this.#ended;
  }

  head(status: number, headers: Record<string, string>): void {
    if (this.status !== 0) return;
    this.status = status;
    for (const [k, v] of Object.entries(headers)) this.headers[k.toLowerCase()] = v;
    if ((this.headers["content-type"] ?? "").includes("text/event-stream")) {
      const stream = (this.#stream = new ChunkQueue());
      this.#resolve({
        kind: "stream",
        status,
        headers: this.headers,
        body: stream,
        cancel: () => {
          this.#ended = true;
          stream.close();
        },
      });
    }
  }

  write(chunk: string | Uint8Array): void {
    if (this.#ended) return;
    if (this.#stream) this.#stream.push(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
    else this.#parts.push(chunk);
  }

  end(chunk?: string | Uint8Array): void {
    if (this.#ended) return;
    if (chunk !== undefined) this.write(chunk);
    this.#ended = true;
    if (this.#stream) return this.#stream.close();
    // a JSON reply is one string most often (kit/wire/http.ts sendJson): no bytes made of it
    const text = chunksText(this.#parts);
    let json: unknown = null;
    try {
      json = text.trim() === "" ? null : JSON.parse(text);
    } catch {
      if (this.status >= 200 && this.status < 300) {
        return this.#reject(
          new ProviderError(
            `provider at ${this.#url} answered HTTP ${this.status} with malformed JSON`,
            502,
          ),
        );
      }
    }
    this.#resolve({ kind: "json", status: this.status || 200, headers: this.headers, text, json });
  }

  destroy(): void {
    this.fail(new Error("the response was cut off"));
  }

  /** The handler failed or cut the reply off: a transport failure, as over a socket. */
  fail(err: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    const why = err instanceof Error ? err.message : String(err);
    const perr = new ProviderError(`provider response from ${this.#url} broke off: ${why}`, 503);
    if (this.#stream) this.#stream.close(perr);
    else this.#reject(perr);
  }
}

/** A provider client whose requests `handler` answers in-process. */
export function inProcessClient(baseUrl: string, handler: WireHandler): ProviderClient {
  /** Each path's URL and its pathname, worked out once per path. */
  const targets = new Map<string, { url: string; pathname: string }>();
  const targetOf = (path: string) => {
    let t = targets.get(path);
    if (t === undefined) {
      const url = joinUrl(baseUrl, path);
      t = { url, pathname: new URL(url).pathname };
      targets.set(path, t);
    }
    return t;
  };
  const send = (request: ProviderRequest): Promise<ProviderResponse> => {
    const { url, pathname } = targetOf(request.path ?? "/chat/completions");
    const payload = request.body instanceof Uint8Array
      ? request.body
      : encoder.encode(JSON.stringify(request.body));
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "application/json",
    };
    for (const [k, v] of Object.entries(request.headers ?? {})) headers[k.toLowerCase()] = v;
    const wire: WireRequest = {
      method: "POST",
      path: pathname,
      headers,
      body: (maxBytes) => Promise.resolve(payload.byteLength > maxBytes ? null : payload),
      discard: () => {},
    };
    return handInProcess<ProviderResponse>(
      handler,
      wire,
      request.signal,
      (resolve, reject) => new CollectingReply(url, resolve, reject),
    );
  };
  return {
    baseUrl,
    send,
    chatCompletions: (body, opts = {}) => send({ ...opts, body, path: "/chat/completions" }),
    close: () => {},
  };
}
