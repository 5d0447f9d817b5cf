/**
 * A rollout's toolsets as tools of the host-side chat loop: each MCP tool advertised as
 * `<prefix>_<tool>` (bare when the prefix is null), its call sent to the toolset's server
 * under the harness's `tool_timeout`, and a failed call answered as a tool error.
 *
 * @module
 */
import { ToolsetError } from "../errors.ts";
import { type HostTool, ToolError } from "../harness/tools.ts";
import type { ToolsetConnection } from "./connection.ts";

/** Options of {@link toolsetHostTools}. */
export interface ToolsetHostToolOptions {
  /** Seconds one call may take (Python's `tool_timeout`). */
  timeoutS: number;
  /** Names already taken by the harness's own tools. */
  reserved?: Iterable<string>;
}

/** The host tools of `connections`; throws a {@link ToolsetError} on a name clash. */
export function toolsetHostTools(
  connections: ToolsetConnection[],
  options: ToolsetHostToolOptions,
): HostTool[] {
  const taken = new Set(options.reserved ?? []);
  const timeoutMs = options.timeoutS * 1000;
  const out: HostTool[] = [];
  for (const conn of connections) {
    for (const info of conn.tools) {
      const name = conn.prefix === null || conn.prefix === ""
        ? info.name
        : `${conn.prefix}_${info.name}`;
      if (taken.has(name)) {
        throw new ToolsetError(
          `duplicate tool name '${name}' (toolset '${conn.name}'); give the toolset a prefix`,
        );
      }
      taken.add(name);
      const parameters = { ...info.inputSchema };
      if (parameters.type === undefined) parameters.type = "object";
      out.push({
        spec: { type: "function", function: { name, description: info.description, parameters } },
        async run(args, signal) {
          const outcome = await conn.call(info.name, args, { timeoutMs, signal });
          if (outcome.error !== null) throw new ToolError(outcome.error);
          return outcome.text;
        },
      });
    }
  }
  return out;
}
