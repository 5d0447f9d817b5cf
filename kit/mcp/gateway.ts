/**
 * The rollout's toolsets for an agent program (an ACP agent, a `command` program): one
 * streamable HTTP MCP endpoint per toolset on 127.0.0.1, behind a per-rollout bearer token,
 * whose calls go to the rollout's toolset connections. Every call is recorded the way the
 * host-side loop records its own (`trace.info.tool_calls`), under the harness's
 * `tool_timeout` and `disabled_tools`, so a tool call looks the same whichever harness made
 * it and the toolset's state stays where the scoring reads it.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
// @ts-types="@modelcontextprotocol/sdk/server/index"
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
// @ts-types="@modelcontextprotocol/sdk/server/streamableHttp"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { ToolCallRecord } from "../harness/tools.ts";
import type { ToolsetConnection } from "./connection.ts";

/** One endpoint as a program is told of it. */
export interface GatewayEndpoint {
  /** The toolset's name (the MCP server name the agent sees). */
  name: string;
  url: string;
  /** Headers every request must carry (the bearer token). */
  headers: Record<string, string>;
}

/** A running gateway. */
export interface ToolsetGateway {
  endpoints: GatewayEndpoint[];
  /**
   * The endpoints as Python's programs take them (`--mcp-config`):
   * `{"mcpServers": {<name>: {url, headers, timeout}}}`.
   */
  mcpConfig(): string;
  close(): Promise<void>;
}

/** Options of {@link serveToolsetGateway}. */
export interface GatewayOptions {
  /** Seconds one call may take. */
  timeoutS: number;
  /** Advertised names (`<prefix>_<tool>`, or bare) not offered. */
  disabled?: string[] | null;
  onToolCall?: (record: ToolCallRecord) => void;
  /** Ends calls in flight (the rollout's signal). */
  signal: AbortSignal;
}

/** Starts the gateway for `connections`. */
export async function serveToolsetGateway(
  connections: ToolsetConnection[],
  options: GatewayOptions,
): Promise<ToolsetGateway> {
  const token = randomUUID();
  const off = new Set(options.disabled ?? []);
  const byName = new Map(connections.map((c) => [c.name, c]));
  let seq = 0;

  const serverFor = (conn: ToolsetConnection): Server => {
    const advertised = (tool: string) => conn.prefix ? `${conn.prefix}_${tool}` : tool;
    const tools = conn.tools.filter((t) => !off.has(advertised(t.name)) && !off.has(t.name));
    const server = new Server({ name: conn.name, version: "1" }, {
      capabilities: { tools: {} },
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description,
        inputSchema: { type: "object", ...t.inputSchema },
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args = {} } = request.params;
      const started = performance.now();
      const known = tools.some((t) => t.name === name);
      const outcome = known
        ? await conn.call(name, args, {
          timeoutMs: options.timeoutS * 1000,
          signal: AbortSignal.any([extra.signal, options.signal]),
        })
        : { text: "", error: `unknown tool '${name}'` };
      options.onToolCall?.({
        id: `mcp_${++seq}`,
        name: advertised(name),
        arguments: JSON.stringify(args),
        result: outcome.error === null ? outcome.text : `Error: ${outcome.error}`,
        error: outcome.error,
        duration: (performance.now() - started) / 1000,
      });
      return outcome.error === null
        ? { content: [{ type: "text", text: outcome.text }] }
        : { content: [{ type: "text", text: outcome.error }], isError: true };
    });
    return server;
  };

  const http = createServer((req, res) => {
    const match = /^\/mcp\/([^/?]+)/.exec(req.url ?? "");
    const conn = match ? byName.get(decodeURIComponent(match[1] ?? "")) : undefined;
    if (!conn) return reject(res, 404, "no such toolset");
    if (req.headers.authorization !== `Bearer ${token}`) return reject(res, 401, "unauthorized");
    // stateless: one server and transport per request (the state lives in the connection)
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    const server = serverFor(conn);
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    server.connect(transport).then(() => transport.handleRequest(req, res)).catch(() =>
      res.destroy()
    );
  });
  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const headers = { authorization: `Bearer ${token}` };
  const endpoints = connections.map((c) => ({
    name: c.name,
    url: `http://127.0.0.1:${port}/mcp/${encodeURIComponent(c.name)}`,
    headers,
  }));
  return {
    endpoints,
    mcpConfig: () =>
      JSON.stringify({
        mcpServers: Object.fromEntries(
          endpoints.map((e) => [e.name, { url: e.url, headers, timeout: options.timeoutS }]),
        ),
      }),
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

function reject(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, { "content-type": "application/json" }).end(
    JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }),
  );
}
