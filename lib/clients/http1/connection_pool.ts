/**
 * Keep-alive connections to HTTP/1.1 origins: opened with a connect timeout (TCP, and TLS
 * with SNI for `https`), kept idle after a response that allows it for as long as the
 * server's `keep-alive: timeout=N` says (less a second, so our reuse does not cross its
 * close) or {@link DEFAULT_IDLE_MS}, and taken back most recently used first. An idle
 * connection that closes, errs or receives bytes is dropped; one past its idle time is
 * closed when next looked at, or by a sweep every {@link SWEEP_MS} (no timer per request).
 * Idle connections never keep the process alive.
 *
 * @module
 */
import net from "node:net";
import tls from "node:tls";

/** Where connections go. */
export interface Http1Origin {
  secure: boolean;
  /** Host name or IP address (no brackets). */
  hostname: string;
  port: number;
}

/** How long an idle connection is kept when the server names no keep-alive timeout. */
export const DEFAULT_IDLE_MS = 4000;
/** Longest an idle connection is kept, whatever the server says. */
const MAX_IDLE_MS = 600_000;
/** How often idle connections past their time are closed. */
const SWEEP_MS = 1000;
/** Idle connections kept per origin; more are closed. */
const MAX_IDLE_PER_ORIGIN = 256;

/** The socket events one in-flight exchange receives. */
export interface ConnectionUser {
  onData(chunk: Uint8Array): void;
  onClose(): void;
}

/** One connection: its socket, the exchange using it, and what happened to it. */
export class Connection {
  readonly socket: net.Socket;
  readonly key: string;
  /** The exchange using this connection; null while idle. */
  user: ConnectionUser | null = null;
  /** The socket's last error (the close that follows reports it). */
  error: Error | null = null;
  /** True when opening the connection ran out of time. */
  connectTimedOut = false;
  /** While idle: when it stops being reusable (epoch milliseconds). */
  idleUntil = 0;

  constructor(socket: net.Socket, key: string) {
    this.socket = socket;
    this.key = key;
  }
}

/** The idle time a response's `keep-alive` header allows, in milliseconds. */
export function idleMsFor(headers: Readonly<Record<string, string>>): number {
  const hint = /(?:^|[,;\s])timeout\s*=\s*(\d+)/i.exec(headers["keep-alive"] ?? "");
  if (hint === null) return DEFAULT_IDLE_MS;
  return Math.min(MAX_IDLE_MS, Math.max(500, Number(hint[1]) * 1000 - 1000));
}

/** Idle keep-alive connections by origin, and the opening of new ones. */
export class ConnectionPool {
  readonly #idle = new Map<string, Connection[]>();
  readonly #connectTimeoutMs: number;
  readonly #ca: string | undefined;
  #sweeper: ReturnType<typeof setInterval> | undefined;
  #closed = false;

  /** `ca`: certificates trusted for `https` instead of the system's (PEM). */
  constructor(connectTimeoutMs: number, options: { ca?: string } = {}) {
    this.#connectTimeoutMs = connectTimeoutMs;
    this.#ca = options.ca;
  }

  /** An idle connection to `origin`, or null. */
  takeIdle(origin: Http1Origin): Connection | null {
    const list = this.#idle.get(keyOf(origin));
    const now = Date.now();
    while (list !== undefined && list.length > 0) {
      const conn = list.pop()!;
      const socket = conn.socket;
      if (socket.destroyed || !socket.writable) continue;
      if (conn.idleUntil <= now) {
        socket.destroy(); // idle for its whole keep-alive time
        continue;
      }
      socket.ref();
      return conn;
    }
    return null;
  }

  /** Opens a new connection to `origin` for `user`. */
  open(origin: Http1Origin, user: ConnectionUser): Connection {
    const { hostname: host, port } = origin;
    const socket = origin.secure
      ? tls.connect({
        host,
        port,
        ALPNProtocols: ["http/1.1"],
        ...(net.isIP(host) === 0 ? { servername: host } : {}),
        ...(this.#ca !== undefined ? { ca: this.#ca } : {}),
      })
      : net.connect({ host, port });
    const conn = new Connection(socket, keyOf(origin));
    conn.user = user;
    socket.setNoDelay(true);
    const timer = setTimeout(() => {
      conn.connectTimedOut = true;
      socket.destroy(new Error(`connect timed out after ${this.#connectTimeoutMs} ms`));
    }, this.#connectTimeoutMs);
    socket.once(origin.secure ? "secureConnect" : "connect", () => clearTimeout(timer));
    socket.on("data", (chunk: Uint8Array) => {
      if (conn.user !== null) conn.user.onData(chunk);
      else socket.destroy(); // bytes nobody asked for: the connection is out of step
    });
    socket.on("error", (err: Error) => (conn.error ??= err));
    socket.on("close", () => {
      clearTimeout(timer);
      const user = conn.user;
      conn.user = null;
      if (user !== null) user.onClose();
      else this.#forget(conn);
    });
    return conn;
  }

  /** Keeps `conn` for a next request for `idleMs`, or closes it when the pool is full or closed. */
  release(conn: Connection, idleMs: number): void {
    conn.user = null;
    const socket = conn.socket;
    if (this.#closed || socket.destroyed) return void socket.destroy();
    let list = this.#idle.get(conn.key);
    if (list === undefined) this.#idle.set(conn.key, list = []);
    if (list.length >= MAX_IDLE_PER_ORIGIN) return void socket.destroy();
    conn.idleUntil = Date.now() + idleMs;
    socket.unref();
    list.push(conn);
    this.#sweeper ??= this.#startSweeper();
  }

  #startSweeper(): ReturnType<typeof setInterval> {
    const timer = setInterval(() => {
      const now = Date.now();
      for (const list of this.#idle.values()) {
        for (const conn of list) if (conn.idleUntil <= now) conn.socket.destroy();
      }
    }, SWEEP_MS);
    (timer as { unref?: () => void }).unref?.();
    return timer;
  }

  #forget(conn: Connection): void {
    const list = this.#idle.get(conn.key);
    const i = list?.indexOf(conn) ?? -1;
    if (i >= 0) list!.splice(i, 1);
  }

  /** Closes every idle connection; connections in use close when their exchange ends. */
  close(): void {
    this.#closed = true;
    clearInterval(this.#sweeper);
    for (const list of this.#idle.values()) for (const conn of list) conn.socket.destroy();
    this.#idle.clear();
  }
}

function keyOf(origin: Http1Origin): string {
  return `${origin.secure ? "https" : "http"}://${origin.hostname}:${origin.port}`;
}
