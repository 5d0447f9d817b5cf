/**
 * A minimal gRPC client transport over `node:http2` (the same code on Deno, Bun and Node):
 * unary and server-streaming calls, 5-byte length-prefixed messages, the status read from
 * the trailers (or from the headers of a trailers-only response), `grpc-message`
 * percent-decoded, HTTP statuses and stream resets mapped to gRPC codes. `http://` targets
 * use h2c (prior knowledge), `https://` targets TLS with ALPN `h2`.
 *
 * Deliberately not `fetch`: fetch cannot read response trailers, so it cannot tell a stream
 * that ended OK from one that ended UNAVAILABLE.
 *
 * @module
 */
import http2 from "node:http2";
import type { ClientHttp2Session, ClientHttp2Stream, IncomingHttpHeaders } from "node:http2";
import { encodeEnvelope, EnvelopeReader, errorMessage } from "../../../kit/mod.ts";
import {
  decodeGrpcMessage,
  GrpcError,
  httpStatusToGrpc,
  rstCodeToGrpc,
  Status,
} from "./grpc_status.ts";

export { GrpcError, Status } from "./grpc_status.ts";

/** Per-call options. */
export interface CallOptions {
  /** Request metadata (header names lowercase). */
  metadata?: Record<string, string> | undefined;
  /** Client-side deadline: the call is cancelled and fails DEADLINE_EXCEEDED after this. */
  timeoutMs?: number | undefined;
  /** Cancels the call (CANCELLED). */
  signal?: AbortSignal | undefined;
}

/** Options of a {@link GrpcChannel}. */
export interface ChannelOptions {
  /** Use h2c even for an `https://` target (loopback test servers). @default from the URL */
  plaintext?: boolean;
  /** Largest message accepted or sent. @default 100 MiB (as libmodal) */
  maxMessageBytes?: number;
  /** `user-agent` header. */
  userAgent?: string;
}

const DEFAULT_MAX_MESSAGE = 100 * 1024 * 1024;

/** A server-streaming call: iterate messages; the iteration throws a GrpcError on failure. */
export interface ServerStream extends AsyncIterable<Uint8Array> {
  /** Cancels the call. */
  cancel(): void;
}

/**
 * One HTTP/2 connection to a gRPC server, reconnected on demand. Calls keep the process
 * alive only while they run (the session is unref'd when idle).
 */
export class GrpcChannel {
  readonly target: string;
  readonly #authority: string;
  readonly #options: ChannelOptions;
  #session: ClientHttp2Session | null = null;
  #active = 0;
  #closed = false;

  /** `target` is `http://host:port` (h2c) or `https://host:port` (TLS). */
  constructor(target: string, options: ChannelOptions = {}) {
    const url = new URL(target);
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      throw new TypeError(`gRPC target must be http:// or https://, got "${target}"`);
    }
    const plaintext = options.plaintext ?? url.protocol === "http:";
    const port = url.port || (url.protocol === "https:" ? "443" : "80");
    this.#authority = `${plaintext ? "http" : "https"}://${url.hostname}:${port}`;
    this.target = target;
    this.#options = options;
  }

  /** Closes the connection; calls in flight fail. Later calls fail with CANCELLED. */
  close(): void {
    this.#closed = true;
    const s = this.#session;
    this.#session = null;
    if (s && !s.destroyed) {
      s.close();
      // Give in-flight streams a moment, then make sure nothing keeps the process alive.
      s.unref?.();
    }
  }

  #getSession(): ClientHttp2Session {
    const existing = this.#session;
    if (existing && !existing.closed && !existing.destroyed) return existing;
    const session = http2.connect(this.#authority);
    const drop = () => {
      if (this.#session === session) this.#session = null;
    };
    session.on("error", drop);
    session.on("close", drop);
    session.on("goaway", drop);
    this.#session = session;
    return session;
  }

  #acquire(session: ClientHttp2Session): void {
    this.#active++;
    session.ref?.();
  }

  #release(session: ClientHttp2Session): void {
    this.#active = Math.max(0, this.#active - 1);
    if (this.#active === 0 && !session.destroyed) session.unref?.();
  }

  /** A unary call: one request message, exactly one response message. */
  async unary(path: string, request: Uint8Array, options: CallOptions = {}): Promise<Uint8Array> {
    let response: Uint8Array | null = null;
    for await (const message of this.#call(path, request, options)) {
      if (response !== null) {
        throw new GrpcError(Status.UNIMPLEMENTED, "unary call received several messages", path);
      }
      response = message;
    }
    if (response === null) {
      throw new GrpcError(Status.UNIMPLEMENTED, "unary call received no message", path);
    }
    return response;
  }

  /** A server-streaming call. */
  serverStream(path: string, request: Uint8Array, options: CallOptions = {}): ServerStream {
    return this.#call(path, request, options);
  }

  #call(path: string, request: Uint8Array, options: CallOptions): ServerStream {
    const queue: Uint8Array[] = [];
    let failure: GrpcError | null = null;
    let done = false;
    let wake: (() => void) | null = null;
    let stream: ClientHttp2Stream | null = null;
    let session: ClientHttp2Session | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let released = false;

    const notify = () => {
      const w = wake;
      wake = null;
      w?.();
    };
    const finish = (err: GrpcError | null) => {
      if (done) return;
      done = true;
      failure = err;
      if (timer !== undefined) clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (session && !released) {
        released = true;
        this.#release(session);
      }
      notify();
    };
    const cancel = (err: GrpcError) => {
      if (done) return;
      try {
        if (stream && !stream.closed && !stream.destroyed) {
          stream.close(http2.constants.NGHTTP2_CANCEL);
        }
      } catch {
        // already closed
      }
      finish(err);
    };
    const onAbort = () => cancel(new GrpcError(Status.CANCELLED, "cancelled by the caller", path));

    const start = () => {
      if (this.#closed) {
        finish(new GrpcError(Status.CANCELLED, "channel is closed", path));
        return;
      }
      if (options.signal?.aborted) {
        finish(new GrpcError(Status.CANCELLED, "cancelled by the caller", path));
        return;
      }
      if (request.byteLength > (this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE)) {
        finish(new GrpcError(Status.RESOURCE_EXHAUSTED, "request message too large", path));
        return;
      }
      const maxMessage = this.#options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE;
      const parser = new EnvelopeReader({
        onHeader: (flags, length) => checkHeader(flags, length, maxMessage, path),
      });
      let s: ClientHttp2Session;
      try {
        s = this.#getSession();
      } catch (e) {
        finish(new GrpcError(Status.UNAVAILABLE, errorMessage(e), path, { cause: e }));
        return;
      }
      session = s;
      this.#acquire(s);
      const headers: Record<string, string> = {
        ":method": "POST",
        ":path": path,
        "content-type": "application/grpc",
        te: "trailers",
        // We never decompress, so we advertise no message or transfer compression.
        "grpc-accept-encoding": "identity",
        "accept-encoding": "identity",
      };
      if (this.#options.userAgent) headers["user-agent"] = this.#options.userAgent;
      for (const [k, v] of Object.entries(options.metadata ?? {})) headers[k.toLowerCase()] = v;
      let req: ClientHttp2Stream;
      try {
        req = s.request(headers, { endStream: false });
      } catch (e) {
        finish(new GrpcError(Status.UNAVAILABLE, errorMessage(e), path, { cause: e }));
        return;
      }
      stream = req;
      let statusFromHeaders: { code: number; message: string } | null = null;
      let statusFromTrailers: { code: number; message: string } | null = null;
      let httpError: GrpcError | null = null;

      req.on("response", (h: IncomingHttpHeaders) => {
        const http = Number(h[":status"] ?? 0);
        const gs = h["grpc-status"];
        if (gs !== undefined) {
          statusFromHeaders = { code: Number(gs), message: headerText(h["grpc-message"]) };
          return;
        }
        if (http !== 200) {
          httpError = new GrpcError(
            httpStatusToGrpc(http),
            `HTTP status ${http} (no gRPC status)`,
            path,
          );
          return;
        }
        const ct = String(h["content-type"] ?? "");
        if (!ct.startsWith("application/grpc")) {
          httpError = new GrpcError(Status.UNKNOWN, `unexpected content-type "${ct}"`, path);
        }
      });
      req.on("trailers", (t: IncomingHttpHeaders) => {
        const gs = t["grpc-status"];
        statusFromTrailers = gs === undefined
          ? { code: Status.UNKNOWN, message: "trailers without grpc-status" }
          : { code: Number(gs), message: headerText(t["grpc-message"]) };
      });
      req.on("data", (chunk: Uint8Array) => {
        if (done) return;
        try {
          for (const m of parser.push(chunk)) queue.push(m.data);
        } catch (e) {
          cancel(e as GrpcError);
          return;
        }
        notify();
      });
      const settle = () => {
        if (done) return;
        if (httpError) return finish(httpError);
        const st = statusFromTrailers ?? statusFromHeaders;
        if (st === null) {
          const rst = req.rstCode;
          if (rst !== undefined && rst !== http2.constants.NGHTTP2_NO_ERROR) {
            return finish(
              new GrpcError(rstCodeToGrpc(rst), `stream reset by the server (code ${rst})`, path),
            );
          }
          return finish(new GrpcError(Status.UNKNOWN, "no gRPC status received", path));
        }
        if (st.code !== Status.OK) return finish(new GrpcError(st.code, st.message, path));
        if (parser.pending > 0) {
          return finish(new GrpcError(Status.INTERNAL, "stream ended inside a message", path));
        }
        finish(null);
      };
      req.on("end", settle);
      req.on("close", settle);
      req.on("error", (e: unknown) => {
        if (done) return;
        finish(new GrpcError(Status.UNAVAILABLE, errorMessage(e), path, { cause: e }));
      });
      if (options.timeoutMs !== undefined && Number.isFinite(options.timeoutMs)) {
        timer = setTimeout(
          () =>
            cancel(
              new GrpcError(
                Status.DEADLINE_EXCEEDED,
                `deadline of ${options.timeoutMs}ms exceeded`,
                path,
              ),
            ),
          Math.max(0, options.timeoutMs),
        );
      }
      options.signal?.addEventListener("abort", onAbort, { once: true });
      req.end(encodeEnvelope(0, request));
    };

    let started = false;
    return {
      cancel: () => cancel(new GrpcError(Status.CANCELLED, "cancelled by the caller", path)),
      [Symbol.asyncIterator](): AsyncIterator<Uint8Array> {
        if (!started) {
          started = true;
          start();
        }
        return {
          next: async (): Promise<IteratorResult<Uint8Array>> => {
            for (;;) {
              const m = queue.shift();
              if (m !== undefined) return { value: m, done: false };
              if (done) {
                if (failure) throw failure;
                return { value: undefined, done: true };
              }
              await new Promise<void>((r) => (wake = r));
            }
          },
          return: (): Promise<IteratorResult<Uint8Array>> => {
            cancel(new GrpcError(Status.CANCELLED, "stream abandoned by the caller", path));
            return Promise.resolve({ value: undefined, done: true });
          },
        };
      },
    };
  }
}

function headerText(v: string | string[] | undefined): string {
  if (v === undefined) return "";
  return decodeGrpcMessage(Array.isArray(v) ? v.join(",") : v);
}

/** Refuses a response message the channel cannot take: compressed, or over the size limit. */
function checkHeader(flags: number, length: number, max: number, path: string): void {
  if (flags !== 0) {
    throw new GrpcError(Status.INTERNAL, "compressed message received without compression", path);
  }
  if (length > max) {
    throw new GrpcError(
      Status.RESOURCE_EXHAUSTED,
      `received message larger than max (${length} vs. ${max})`,
      path,
    );
  }
}
