/**
 * The MCP server of one session of a TypeScript toolset (official SDK `McpServer`): its
 * tools, and its state as the resource {@link STATE_URI} (JSON), so the host reads the
 * state back over the protocol when the server runs in another process.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/server/mcp"
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { STATE_URI, type ToolsetDefinition } from "./toolset.ts";

/** Builds the MCP server of one session of `def` over `state`. */
export function toolsetServer<S>(def: ToolsetDefinition<S>, state: S): McpServer {
  const server = new McpServer(
    { name: def.name, version: "1" },
    { capabilities: { tools: {}, resources: {} } },
  );
  for (const [name, t] of Object.entries(def.tools)) {
    server.registerTool(
      name,
      { description: t.description, inputSchema: t.input },
      async (args: unknown, extra: { signal: AbortSignal }) => {
        // a throw becomes `isError: true` with the message (McpServer does this)
        const text = await t.run(args as never, { state, signal: extra.signal });
        return { content: [{ type: "text" as const, text: String(text) }] };
      },
    );
  }
  server.registerResource(
    "state",
    STATE_URI,
    { description: "This session's toolset state (JSON).", mimeType: "application/json" },
    (uri: URL) => ({
      contents: [{ uri: uri.href, mimeType: "application/json", text: JSON.stringify(state) }],
    }),
  );
  return server;
}
