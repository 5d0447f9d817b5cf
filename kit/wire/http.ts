/**
 * The small HTTP pieces every loopback model server here shares, whatever carries the
 * request: a transport-neutral request and reply ({@link WireRequest}, {@link WireReply}),
 * their `node:http` adapter, JSON replies, a bounded body reader, and listening on /
 * closing a loopback server.
 *
 * @module
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { concatBytes } from "../util/bytes.ts";

/** One HTTP request as a handler sees it, over a socket or in-process. */
export interface WireRequest {
  /** Upper-case method, e.g. `POST`. */
  readonly method: string;
  /** The path without the query string, e.g. `/v1/chat/completions`. */
  readonly path: string;
  /** Headers with lower-case names (repeated ones joined by `, `). */
  readonly headers: Readonly<Record<string, string>>;
  /** The whole body; null when it is longer than `maxBytes`. Read it at most once. */
  body(maxBytes: number): Promise<Uint8Array | null>;
  /** Drops the body unread. */
  discard(): void;
}

/** Where a handler writes one reply. */
export interface WireReply {
  /** True once the status and headers are out. */
  readonly headersSent: boolean;
  /** True once the reply ended or the peer went away: later writes are dropped. */
  readonly finished: boolean;
  /** Sends the status and headers. */
  head(status: number, headers: Record<string, string>): void;
  /** Sends part of the body; never throws (a peer that went away is not an error). */
  write(chunk: string | Uint8Array): void;
  /** Ends the body. */
  end(chunk?: string | Uint8Array): void;
  /** Cuts the reply off: the peer sees a broken body, never a complete one. */
  destroy(): void;
  /**
   * Optional: aborts when the peer went away before the reply ended (it closed its
   * connection), so the work behind the reply can be cancelled.
   */
  readonly gone?: AbortSignal;
  /**
   * Optional: the body the coming `end` sends as its one chunk, already parsed (what
   * `JSON.parse` of it gives, held by nothing else). A reply that hands its body to a caller
   * in this process passes it on, so that the caller need not parse the text again; a reply
   * over a socket has no use for it.
   */
  offerParsed?(value: unknown): void;
}

/** A handler of {@link WireRequest}s. */
export type WireHandler = (req: WireRequest, reply: WireReply) => Promise<void>;

/** Sends a JSON reply (a string body is sent as it is); nothing when a reply already started. */
export function sendJson(
  reply: WireReply,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (reply.headersSent || reply.finished) return;
  reply.head(status, { "content-type": "application/json", ...headers });
  reply.end(typeof body === "string" ? body : JSON.stringify(body));
}

/** Reads a `node:http` request body; null (and the request dropped) past `maxBytes`. */
export function readNodeBody(req: IncomingMessage, maxBytes: number): Promise<Uint8Array | null> {
  return new Promise((resolve, reject) => {
    const parts: Uint8Array[] = [];
    let size = 0;
    req.on("data", (chunk: Uint8Array) => {
      size += chunk.byteLength;
      if (size > maxBytes) {
        resolve(null);
        req.destroy();
        return;
      }
      parts.push(chunk);
    });
    req.on("end", () => resolve(concatBytes(parts)));
    req.on("error", reject);
  });
}

/** Lower-case header map of a `node:http` request (repeated headers joined by `, `). */
function nodeHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
  }
  return out;
}

/** Adapts a `node:http` request and response to {@link WireRequest} and {@link WireReply}. */
export function fromNode(req: IncomingMessage, res: ServerResponse): [WireRequest, WireReply] {
  res.on("error", () => {});
  const gone = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) gone.abort(new Error("the client closed its connection"));
  });
  const request: WireRequest = {
    method: req.method ?? "GET",
    path: (req.url ?? "/").split("?")[0] ?? "/",
    headers: nodeHeaders(req),
    body: (maxBytes) => readNodeBody(req, maxBytes),
    discard: () => void req.resume(),
  };
  const reply: WireReply = {
    get headersSent() {
      return res.headersSent;
    },
    get finished() {
      return res.destroyed || res.writableEnded;
    },
    head: (status, headers) => void res.writeHead(status, headers),
    write(chunk) {
      if (res.destroyed || res.writableEnded) return;
      try {
        res.write(chunk);
      } catch {
        // the peer went away; the caller carries on
      }
    },
    end(chunk) {
      if (res.destroyed || res.writableEnded) return;
      if (chunk === undefined) res.end();
      else res.end(chunk);
    },
    destroy: () => void res.destroy(),
    gone: gone.signal,
  };
  return [request, reply];
}

/** Starts `server` on 127.0.0.1 with an OS-chosen port; returns `http://127.0.0.1:<port>`. */
export function listenLoopback(server: Server): Promise<string> {
  return listenOn(server, "127.0.0.1", 0);
}

/** Starts `server` on `host`:`port` (0 = OS-chosen); returns `http://<host>:<port>`. */
export async function listenOn(server: Server, host: string, port: number): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const shown = host.includes(":") ? `[${host}]` : host;
  return `http://${shown}:${(server.address() as AddressInfo).port}`;
}

/** Stops `server` and drops its open connections. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    (server as { closeAllConnections?: () => void }).closeAllConnections?.();
  });
}
