/**
 * One HTTP/1.1 request and its response over a pooled connection: the request written in
 * one piece (with the others of the event loop's turn: lib/clients/http1/write_soon.ts),
 * the response head delivered as a promise, the body as a byte stream that pauses the
 * socket while its reader lags. When the response ends and allows it, the
 * connection goes back to the pool before the reader has even taken the last bytes.
 *
 * @module
 */
import { ChunkQueue } from "../chunk_queue.ts";
import {
  type Connection,
  type ConnectionPool,
  type ConnectionUser,
  type Http1Origin,
  idleMsFor,
} from "./connection_pool.ts";
import { type ResponseHead, ResponseParser } from "./response_parser.ts";
import { writeSoon } from "./write_soon.ts";

/** A transport failure before the response head arrived. */
export class Http1RequestError extends Error {
  /** The system or parser code (`ECONNREFUSED`, `ECONNRESET`, `HPE_INVALID_RESPONSE`, ...). */
  readonly code: string;
  /** True when the request went out on a pooled keep-alive connection. */
  readonly reused: boolean;
  /** True when some bytes of a response had arrived. */
  readonly responseStarted: boolean;
  /** True when opening the connection ran out of time. */
  readonly connectTimedOut: boolean;
  constructor(
    cause: Error,
    flags: { reused: boolean; responseStarted: boolean; connectTimedOut: boolean },
  ) {
    super(cause.message, { cause });
    this.name = "Http1RequestError";
    const code = (cause as { code?: unknown }).code;
    this.code = typeof code === "string"
      ? code
      : flags.connectTimedOut
      ? "ETIMEDOUT"
      : "ECONNRESET";
    this.reused = flags.reused;
    this.responseStarted = flags.responseStarted;
    this.connectTimedOut = flags.connectTimedOut;
  }
}

/** A response head with its body stream. */
export interface Http1Response {
  status: number;
  /** Header fields by lower-case name. */
  headers: Record<string, string>;
  /** The body bytes; a connection that breaks off mid-body throws from the iteration. */
  body: AsyncIterable<Uint8Array>;
  /** True once the whole body arrived. */
  readonly complete: boolean;
  /**
   * The whole body, when it has all arrived already (taken: `body` then ends at once);
   * null while more may come. Spares a short reply the async iteration.
   */
  takeBodyIfComplete(): Uint8Array[] | null;
}

/** One request on its way; `response` settles once the head arrives or the request fails. */
export interface Http1Exchange {
  readonly response: Promise<Http1Response>;
  /** True when the request went out on a pooled keep-alive connection. */
  readonly reused: boolean;
  /** Drops the connection (abort, stall): a pending head rejects, a body stream throws `reason`. */
  destroy(reason: Error): void;
}

/**
 * Sends `request` (the whole request: line, header fields and body) to `origin`, on an
 * idle pooled connection unless `fresh`.
 */
export function exchange(
  pool: ConnectionPool,
  origin: Http1Origin,
  request: Uint8Array,
  fresh: boolean,
): Http1Exchange {
  return new Exchange(pool, origin, request, fresh);
}

class Exchange implements Http1Exchange, ConnectionUser {
  readonly response: Promise<Http1Response>;
  readonly reused: boolean;
  readonly #pool: ConnectionPool;
  readonly #conn: Connection;
  readonly #parser: ResponseParser;
  #resolve!: (res: Http1Response) => void;
  #reject!: (err: unknown) => void;
  #head: ResponseHead | null = null;
  #body: ChunkQueue | null = null;
  #finished = false;

  constructor(pool: ConnectionPool, origin: Http1Origin, request: Uint8Array, fresh: boolean) {
    this.#pool = pool;
    this.response = new Promise<Http1Response>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.#parser = new ResponseParser({
      head: (head) => this.#onHead(head),
      body: (bytes) => this.#body!.push(bytes),
      end: () => this.#onEnd(),
    });
    const idle = fresh ? null : pool.takeIdle(origin);
    this.reused = idle !== null;
    if (idle !== null) idle.user = this;
    this.#conn = idle ?? pool.open(origin, this);
    writeSoon(this.#conn.socket, request); // with the other requests of this turn
  }

  #onHead(head: ResponseHead): void {
    this.#head = head;
    const socket = this.#conn.socket;
    const body = (this.#body = new ChunkQueue({
      pause: () => socket.pause(),
      resume: () => socket.resume(),
    }));
    const parser = this.#parser;
    this.#resolve({
      status: head.status,
      headers: head.headers,
      body,
      get complete() {
        return parser.done;
      },
      takeBodyIfComplete: () => body.takeAllIfEnded(),
    });
  }

  #onEnd(): void {
    this.#finished = true;
    const conn = this.#conn;
    if (this.#head!.keepAlive && conn.user === this) {
      conn.socket.resume(); // a lagging reader must not leave the pooled socket paused
      this.#pool.release(conn, idleMsFor(this.#head!.headers));
    } else {
      if (conn.user === this) conn.user = null;
      conn.socket.destroy();
    }
    this.#body!.close();
  }

  onData(chunk: Uint8Array): void {
    try {
      this.#parser.feed(chunk);
    } catch (err) {
      // bytes after the response, in the read that ended it: the connection is out of step
      if (this.#finished) return void this.#conn.socket.destroy();
      this.#fail(err as Error);
    }
  }

  onClose(): void {
    if (this.#finished) return;
    try {
      this.#parser.closed();
    } catch (err) {
      this.#fail(this.#conn.error ?? (err as Error));
    }
  }

  destroy(reason: Error): void {
    this.#fail(reason);
  }

  #fail(err: Error): void {
    if (this.#finished) return;
    this.#finished = true;
    const conn = this.#conn;
    if (conn.user === this) conn.user = null;
    conn.socket.destroy();
    if (this.#body !== null) return this.#body.close(err);
    this.#reject(
      new Http1RequestError(err, {
        reused: this.reused,
        responseStarted: this.#parser.started,
        connectTimedOut: conn.connectTimedOut,
      }),
    );
  }
}
