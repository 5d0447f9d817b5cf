/**
 * The interception server's front: routes each request to the dialect that serves its
 * path, refuses what no dialect serves (404/405), authenticates the rollout by its
 * secret (`x-api-key` or bearer; 401 unknown, 409 closed), then answers a dialect's fixed
 * route, relays a side request (passthrough.ts) or hands a model call to call.ts.
 * Sessions open and close here; closed secrets are remembered in a ring. The handler
 * serves the socket (programs in a runtime) and, registered in-process, the host-side
 * harnesses, which reach it through `wireFetch` (kit/wire/in_process.ts).
 *
 * @module
 */
import http from "node:http";
import type { Dialect, DialectRoute } from "../../kit/wire/dialect.ts";
import { findRoute } from "../../kit/wire/dialect.ts";
import {
  closeServer,
  fromNode,
  listenOn,
  sendJson,
  type WireHandler,
} from "../../kit/wire/http.ts";
import { serveInProcess } from "../../kit/wire/in_process.ts";
import { ALL_DIALECTS } from "../dialects/mod.ts";
import { handleCall, sendError, type ServerContext } from "./call.ts";
import { rolloutSecret } from "./headers.ts";
import { handlePassthrough } from "./passthrough.ts";
import { interceptToolResult } from "./hooks.ts";
import { TOOL_HOOK_PATH } from "../../kit/intercept.ts";
import { TaskError } from "../../kit/errors.ts";
import type { Message } from "../../kit/trace/types.ts";

const decoder = new TextDecoder();
import { type InterceptionSession, Session, type SessionOptions } from "./session.ts";

/** A log callback (the library never prints). */
export type InterceptionLog = (level: "debug" | "info" | "warn", message: string) => void;

/** Options of {@link startInterceptionServer}. */
export interface InterceptionServerOptions {
  log?: InterceptionLog;
  /**
   * The dialects served; the first one also words the errors of unknown routes.
   * @default every dialect of lib/dialects/mod.ts
   */
  dialects?: readonly Dialect[];
  /**
   * The dialects the provider serves (`client.dialects`): a call in another one is
   * translated into one of these (lib/interception/translate.ts). @default the dialects served
   */
  providerDialects?: readonly Dialect[];
  /**
   * Whether the provider takes images (`client.images`): when false, a call carrying one is
   * refused before it goes upstream. @default true
   */
  providerImages?: boolean;
  /** Address to bind. @default "127.0.0.1" */
  host?: string;
  /** Port to bind. @default 0 (OS-chosen) */
  port?: number;
  /** The URL programs reach the server at (a tunnel's), instead of the bound address. */
  publicUrl?: string;
}

/** The run's interception server. */
export interface InterceptionServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** Opens a session for one rollout. */
  open(options: SessionOptions): InterceptionSession;
  /** The server's handler, whatever the transport (the socket and in-process both use it). */
  readonly handle: WireHandler;
  /** Closes every session and the server. */
  close(): Promise<void>;
}

/** Closed sessions whose secrets still get 409 (older ones get 401). */
const MAX_CLOSED_SECRETS = 4096;

/** The routes served, as said in 404s: `POST /v1/chat/completions, GET /v1/models/<id>`. */
function describeRoutes(dialects: readonly Dialect[]): string {
  return dialects.flatMap((d) =>
    d.routes.map((r: DialectRoute) =>
      `${r.method} ${r.path.endsWith("/") ? `${r.path}<id>` : r.path}`
    )
  ).join(", ");
}

/** Remembers the most recent closed secrets, so their requests get 409, not 401. */
class ClosedSecrets {
  readonly #set = new Set<string>();
  readonly #ring: (string | undefined)[] = new Array(MAX_CLOSED_SECRETS);
  #at = 0;

  add(secret: string): void {
    // A ring: a long run does not grow with every rollout; an older secret then gets
    // 401 instead of 409, an error all the same.
    const evicted = this.#ring[this.#at];
    if (evicted !== undefined) this.#set.delete(evicted);
    this.#ring[this.#at] = secret;
    this.#at = (this.#at + 1) % MAX_CLOSED_SECRETS;
    this.#set.add(secret);
  }

  has(secret: string): boolean {
    return this.#set.has(secret);
  }
}

/** The sessions of one server and the handler that serves them, whatever the transport. */
class InterceptionRouter {
  readonly sessions = new Map<string, Session>();
  readonly #closed = new ClosedSecrets();
  readonly #dialects: readonly Dialect[];
  readonly #ctx: ServerContext;
  readonly #served: string;

  constructor(
    dialects: readonly Dialect[],
    log: InterceptionLog,
    providerDialects: readonly Dialect[] = dialects,
    providerImages = true,
  ) {
    if (dialects.length === 0) throw new Error("an interception server needs a dialect");
    if (providerDialects.length === 0) throw new Error("a provider serves at least one dialect");
    this.#dialects = dialects;
    this.#ctx = { log, refuseStreamUsage: new WeakSet(), providerDialects, providerImages };
    this.#served = describeRoutes(dialects);
  }

  /** Opens a session whose endpoint is `endpoint`. */
  open(endpoint: string, options: SessionOptions): Session {
    const session = new Session(endpoint, options, (closed) => {
      this.sessions.delete(closed.secret);
      this.#closed.add(closed.secret);
    });
    this.sessions.set(session.secret, session);
    return session;
  }

  /** Closes every session. */
  closeAll(): void {
    for (const s of [...this.sessions.values()]) s.close();
  }

  /** Serves one request. */
  readonly handle: WireHandler = async (req, reply) => {
    const main = this.#dialects[0]!;
    try {
      await this.#route(req, reply);
    } catch (err) {
      this.#ctx.log(
        "warn",
        `interception request failed: ${err instanceof Error ? err.message : String(err)}`,
      );
      sendError(reply, main, 500, "interception server error", "server_error");
    }
  };

  /**
   * A harness's tool result through the task's hooks (Python's `/tool` route,
   * verifiers/v1/interception/server.py@a60a606): `{action: allow | rewrite | stop}`.
   */
  async #toolHook(...[req, reply]: Parameters<WireHandler>): Promise<void> {
    if (req.method !== "POST") {
      req.discard();
      return sendJson(reply, 405, { error: `Method ${req.method} not allowed on ${req.path}` });
    }
    const secret = rolloutSecret(req.headers);
    const session = secret === null ? undefined : this.sessions.get(secret);
    if (!session || session.closed) {
      req.discard();
      return sendJson(reply, session ? 409 : 401, {
        error: session ? "rollout concluded" : "unauthorized",
      });
    }
    const { trace, hooks } = session.options;
    const stopped = session.stopCondition ?? trace.stop_condition;
    if (stopped !== null) {
      req.discard();
      return sendJson(reply, 200, { action: "stop", reason: stopped });
    }
    const raw = await req.body(MAX_TOOL_HOOK_BYTES);
    let parsed: ReturnType<typeof toolHookBody>;
    try {
      parsed = raw === null ? "body too large" : toolHookBody(JSON.parse(decoder.decode(raw)));
    } catch {
      parsed = "the body is not JSON";
    }
    if (typeof parsed === "string") return sendJson(reply, 400, { error: parsed });
    if (!hooks || (hooks.request.length === 0 && hooks.requestStops.length === 0)) {
      return sendJson(reply, 200, { action: "allow" });
    }
    try {
      const verdict = await interceptToolResult(
        {
          hooks,
          nodes: trace.nodes,
          tools: trace.tools.length > 0 ? trace.tools : null,
          prepared: session.prepared,
          recordRewrites: (names) => session.recordRewrites("request", names),
          stop: (condition) => session.stop(condition),
        },
        parsed.phase,
        parsed.message,
      );
      sendJson(reply, 200, verdict);
    } catch (err) {
      const e = err instanceof TaskError ? err : new TaskError(String(err));
      session.hookError ??= e;
      sendJson(reply, 400, { error: e.message });
    }
  }

  async #route(...[req, reply]: Parameters<WireHandler>): Promise<void> {
    const main = this.#dialects[0]!;
    const path = req.path;
    if (path === TOOL_HOOK_PATH) return await this.#toolHook(req, reply);
    let dialect: Dialect = main;
    let route: DialectRoute | undefined;
    for (const d of this.#dialects) {
      route = findRoute(d, path);
      if (route) {
        dialect = d;
        break;
      }
    }
    if (!route) {
      req.discard();
      // A dialect's refusal answers only a path no dialect serves.
      for (const d of this.#dialects) {
        const refused = d.refuse?.(path);
        if (refused) {
          return sendJson(reply, refused.status, refused.body, { "x-should-retry": "false" });
        }
      }
      const message =
        `Unknown request URL: ${req.method} ${path} (this server answers ${this.#served})`;
      return sendError(reply, main, 404, message, "invalid_request_error", "unknown_url");
    }
    if (req.method !== route.method) {
      req.discard();
      return sendError(reply, dialect, 405, `Method ${req.method} not allowed on ${path}`);
    }
    const secret = rolloutSecret(req.headers);
    const session = secret === null ? undefined : this.sessions.get(secret);
    if (!session || session.closed) {
      req.discard();
      if (session || (secret !== null && this.#closed.has(secret))) {
        return sendError(reply, dialect, 409, "rollout session is closed");
      }
      const message = "invalid or missing interception secret";
      return sendError(reply, dialect, 401, message, "invalid_request_error", "invalid_api_key");
    }
    if (route.answer) {
      const answer = route.answer(path, session.options.model);
      const headers: Record<string, string> = answer.status >= 400
        ? { "x-should-retry": "false" }
        : {};
      return sendJson(reply, answer.status, answer.body, headers);
    }
    if (route.relay) return await handlePassthrough(this.#ctx, dialect, req, reply, session);
    await handleCall(this.#ctx, dialect, req, reply, session);
  }
}

/** The largest tool hook body read. */
const MAX_TOOL_HOOK_BYTES = 64 * 1024 * 1024;

/** Reads a tool hook's `{phase, message}`, or says why it is not one. */
function toolHookBody(
  json: unknown,
): { phase: "before" | "after"; message: Extract<Message, { role: "tool" }> } | string {
  const b = json as { phase?: unknown; message?: Record<string, unknown> } | null;
  if (b === null || typeof b !== "object") return "a tool hook is a JSON object";
  if (b.phase !== "before" && b.phase !== "after") return "phase must be 'before' or 'after'";
  const m = b.message;
  if (
    typeof m !== "object" || m === null || m.role !== "tool" ||
    typeof m.tool_call_id !== "string" || typeof m.content !== "string"
  ) return "message must be a tool message with a tool_call_id and text content";
  return { phase: b.phase, message: m as Extract<Message, { role: "tool" }> };
}

/** Starts the interception server on 127.0.0.1 (OS-chosen port) unless told otherwise. */
export async function startInterceptionServer(
  options: InterceptionServerOptions = {},
): Promise<InterceptionServer> {
  const router = new InterceptionRouter(
    options.dialects ?? ALL_DIALECTS,
    options.log ?? (() => {}),
    options.providerDialects,
    options.providerImages,
  );
  const server = http.createServer((req, res) => void router.handle(...fromNode(req, res)));
  const bound = await listenOn(server, options.host ?? "127.0.0.1", options.port ?? 0);
  const url = options.publicUrl?.replace(/\/+$/, "") ?? bound;
  // Host-side harnesses (kit/harness/chat_loop.ts) reach the same handler without the socket.
  const unserve = serveInProcess(url, router.handle);
  return {
    url,
    open: (opts) => router.open(`${url}/v1`, opts),
    handle: router.handle,
    async close(): Promise<void> {
      unserve();
      router.closeAll();
      await closeServer(server);
    },
  };
}
