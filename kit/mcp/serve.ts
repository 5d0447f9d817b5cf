/**
 * Serves a TypeScript toolset as a standalone MCP server: over stdio (one process, one
 * session, one state) or over streamable HTTP (one state per MCP session, so every rollout
 * that connects gets its own). A toolset shipped this way is the same definition a taskset
 * runs in-process.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
// @ts-types="@modelcontextprotocol/sdk/server/stdio"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/server/streamableHttp"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { ToolsetDefinition } from "./toolset.ts";
import { toolsetServer } from "./server.ts";

/** Path the HTTP server answers MCP on. */
export const MCP_PATH = "/mcp";

/** Serves `def` on this process's stdin/stdout until stdin closes. */
export async function serveToolsetStdio<S>(def: ToolsetDefinition<S>): Promise<void> {
  const server = toolsetServer(def, def.state());
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => (transport.onclose = resolve));
  await server.connect(transport);
  process.stdin.on("end", () => void server.close());
  await closed;
}

/** A running HTTP toolset server. */
export interface HttpToolsetServer {
  /** `http://<host>:<port>/mcp`. */
  url: string;
  /** Open MCP sessions. */
  readonly sessions: number;
  /** Closes every session and the listener. */
  close(): Promise<void>;
}

/** Options of {@link serveToolsetHttp}. */
export interface ServeHttpOptions {
  /** @default "127.0.0.1" */
  host?: string;
  /** 0 lets the OS choose. @default 0 */
  port?: number;
}

/** Serves `def` over streamable HTTP, one state per MCP session. */
export async function serveToolsetHttp<S>(
  def: ToolsetDefinition<S>,
  options: ServeHttpOptions = {},
): Promise<HttpToolsetServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const http: Server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== MCP_PATH) return reply(res, 404, "not found");
    const sid = req.headers["mcp-session-id"];
    const known = typeof sid === "string" ? sessions.get(sid) : undefined;
    if (known) return void known.handleRequest(req, res).catch(() => res.destroy());
    if (sid !== undefined) return reply(res, 404, "unknown session");
    if (req.method !== "POST") return reply(res, 400, "no session: initialize first");
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    toolsetServer(def, def.state()).connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const { address, port } = http.address() as AddressInfo;
  const host = address.includes(":") ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}${MCP_PATH}`,
    get sessions() {
      return sessions.size;
    },
    async close() {
      await Promise.allSettled([...sessions.values()].map((t) => t.close()));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function reply(res: import("node:http").ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }),
  );
}
