/**
 * A small gRPC server for loopback fakes: h2c (`node:http2`) on 127.0.0.1 with an
 * OS-chosen port, real gRPC framing (5-byte length-prefixed messages), status in trailers
 * (`grpc-status`, percent-encoded `grpc-message`) or trailers-only for immediate errors,
 * and cancellation noticed when the client resets the stream. Handlers get the decoded
 * request frame and a {@link GrpcCall} to answer on.
 *
 * @module
 */
import http2 from "node:http2";
import type { Http2Session, IncomingHttpHeaders, ServerHttp2Stream } from "node:http2";
import type { AddressInfo } from "node:net";
import { concatBytes } from "../../kit/util/bytes.ts";

/** An error a handler throws to end the call with a gRPC status. */
export class GrpcStatusError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** Percent-encodes a status message as the gRPC spec asks (bytes outside 0x20..0x7E and `%`). */
export function encodeGrpcMessage(message: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(message)) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25
      ? String.fromCharCode(byte)
      : "%" + byte.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

/** One call being answered. */
export interface GrpcCall {
  /** The method path, e.g. `/modal.client.ModalClient/AuthTokenGet`. */
  readonly path: string;
  /** Request headers (pseudo-headers removed, names lowercase, values joined). */
  readonly metadata: Record<string, string>;
  /** True once the client cancelled (reset the stream) or the call ended. */
  readonly cancelled: boolean;
  /** Resolves when the client cancels or the stream closes. */
  readonly closed: Promise<void>;
  /** Sends one response message (headers go out first). */
  send(message: Uint8Array): void;
  /** Ends the call with a status (trailers, or trailers-only when nothing was sent). */
  end(code?: number, message?: string): void;
  /** Resets the stream without a status (a dropped call). */
  reset(): void;
  /** Destroys the whole connection (a connection reset). */
  destroyConnection(): void;
}

/** Handles one call. Throw a {@link GrpcStatusError} to fail it; return to end it OK. */
export type GrpcHandler = (request: Uint8Array, call: GrpcCall) => Promise<void> | void;

/** A running server. */
export interface GrpcServer {
  readonly port: number;
  readonly url: string;
  /** Closes every connection (GOAWAY, then a forced close after 1 s) and the listener. */
  close(): Promise<void>;
}

/**
 * Starts a gRPC server. `route(path)` returns the handler of a method or null
 * (UNIMPLEMENTED). `validate(headers)` may throw a {@link GrpcStatusError} before routing.
 */
export async function startGrpcServer(
  route: (path: string) => GrpcHandler | null,
  options: { validate?: (path: string, headers: Record<string, string>) => void } = {},
): Promise<GrpcServer> {
  const server = http2.createServer();
  const sessions = new Set<Http2Session>();
  server.on("session", (s: Http2Session) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
    s.on("error", () => {});
  });
  server.on("stream", (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    stream.on("error", () => {});
    const path = String(headers[":path"] ?? "");
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) {
      if (k.startsWith(":") || v === undefined) continue;
      metadata[k] = Array.isArray(v) ? v.join(", ") : String(v);
    }
    const chunks: Uint8Array[] = [];
    stream.on("data", (c: Uint8Array) => chunks.push(new Uint8Array(c)));
    stream.on("end", () => {
      const call = makeCall(stream, path, metadata);
      let body: Uint8Array;
      try {
        if (headers[":method"] !== "POST") {
          throw new GrpcStatusError(12, `method ${headers[":method"]} is not POST`);
        }
        const ct = metadata["content-type"] ?? "";
        if (!ct.startsWith("application/grpc")) {
          stream.respond({ ":status": 415 }, { endStream: true });
          return;
        }
        options.validate?.(path, metadata);
        body = singleMessage(concatBytes(chunks));
      } catch (e) {
        failCall(call, e);
        return;
      }
      const handler = route(path);
      if (handler === null) {
        call.end(12, `unknown method ${path}`);
        return;
      }
      Promise.resolve()
        .then(() => handler(body, call))
        .then(() => call.end(0), (e) => failCall(call, e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sessions) s.close();
        const force = setTimeout(() => {
          for (const s of sessions) s.destroy();
        }, 1000);
        server.close(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}

function failCall(call: GrpcCall, e: unknown): void {
  if (e instanceof GrpcStatusError) call.end(e.code, e.message);
  else call.end(13, `fake server error: ${e instanceof Error ? e.message : String(e)}`);
}

/** Parses a request body that must be exactly one uncompressed gRPC message. */
function singleMessage(body: Uint8Array): Uint8Array {
  if (body.byteLength < 5) throw new GrpcStatusError(13, "request has no complete message frame");
  const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
  if (view.getUint8(0) !== 0) {
    throw new GrpcStatusError(12, "compressed requests are not supported");
  }
  const len = view.getUint32(1);
  if (body.byteLength !== 5 + len) {
    throw new GrpcStatusError(
      13,
      `request frame length ${len} does not match ${body.byteLength - 5} bytes`,
    );
  }
  return body.slice(5);
}

function makeCall(
  stream: ServerHttp2Stream,
  path: string,
  metadata: Record<string, string>,
): GrpcCall {
  let headersSent = false;
  let ended = false;
  let cancelled = false;
  let onClosed: () => void = () => {};
  const closed = new Promise<void>((r) => (onClosed = r));
  stream.on("close", () => {
    if (!ended) cancelled = true;
    onClosed();
  });
  stream.on("aborted", () => {
    cancelled = true;
    onClosed();
  });
  const open = () => !ended && !stream.destroyed && !stream.closed;
  return {
    path,
    metadata,
    get cancelled() {
      return cancelled || ended;
    },
    closed,
    send(message: Uint8Array) {
      if (!open()) return;
      if (!headersSent) {
        headersSent = true;
        stream.respond({ ":status": 200, "content-type": "application/grpc" }, {
          waitForTrailers: true,
        });
      }
      const frame = new Uint8Array(5 + message.byteLength);
      new DataView(frame.buffer).setUint32(1, message.byteLength);
      frame.set(message, 5);
      stream.write(frame);
    },
    end(code = 0, message = "") {
      if (!open()) {
        ended = true;
        return;
      }
      ended = true;
      const status = { "grpc-status": String(code), "grpc-message": encodeGrpcMessage(message) };
      if (!headersSent) {
        headersSent = true;
        stream.respond({ ":status": 200, "content-type": "application/grpc", ...status }, {
          endStream: true,
        });
        return;
      }
      stream.once("wantTrailers", () => {
        try {
          stream.sendTrailers(status);
        } catch {
          // the client went away
        }
      });
      stream.end();
    },
    reset() {
      ended = true;
      if (!stream.destroyed) stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    },
    destroyConnection() {
      ended = true;
      stream.session?.destroy();
    },
  };
}
