/**
 * Starts the toolset gateway (`gateway.ts`) loading the MCP SDK only then, so a harness can
 * import it from the kit without every run paying for the SDK.
 *
 * @module
 */
import type { GatewayOptions, ToolsetGateway } from "./gateway.ts";
import type { ToolsetConnection } from "./connection.ts";

/** {@link serveToolsetGateway} behind a dynamic import. */
export async function startToolsetGateway(
  connections: ToolsetConnection[],
  options: GatewayOptions,
): Promise<ToolsetGateway> {
  const { serveToolsetGateway } = await import("./gateway.ts");
  return serveToolsetGateway(connections, options);
}
