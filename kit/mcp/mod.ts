/**
 * MCP toolsets: define one in TypeScript, serve it standalone, or connect a rollout to
 * one (in-process, stdio command, streamable HTTP URL) and offer its tools to the model.
 *
 * @module
 */
export {
  defineToolset,
  isToolsetDefinition,
  STATE_URI,
  tool,
  type ToolRunContext,
  type ToolsetDefinition,
  type ToolsetTool,
} from "./toolset.ts";
export { toolsetServer } from "./server.ts";
export {
  type HttpToolsetServer,
  MCP_PATH,
  type ServeHttpOptions,
  serveToolsetHttp,
  serveToolsetStdio,
} from "./serve.ts";
export {
  checkSources,
  type CommandToolsetSource,
  type InlineToolsetSource,
  sourceName,
  sourcePrefix,
  type ToolsetSource,
  type ToolsetSourceBase,
  type UrlToolsetSource,
} from "./source.ts";
export {
  type McpToolInfo,
  openToolset,
  type OpenToolsetOptions,
  type ToolOutcome,
  type ToolsetConnection,
} from "./connection.ts";
export { type ToolsetHostToolOptions, toolsetHostTools } from "./host_tools.ts";
export {
  type GatewayEndpoint,
  type GatewayOptions,
  serveToolsetGateway,
  type ToolsetGateway,
} from "./gateway.ts";
export { startToolsetGateway } from "./start_gateway.ts";
