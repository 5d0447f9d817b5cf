/**
 * The tool settings of Python's `HarnessConfig` (`tool_timeout`, `disabled_tools`) as zod
 * fields, for a harness whose tools run on the host to spread into its config schema.
 *
 * @module
 */
import { z } from "zod";

/** The zod types of {@link hostToolKeys} (spelled out for the published API). */
export type HostToolKeysShape = {
  tool_timeout: z.ZodDefault<z.ZodNumber>;
  disabled_tools: z.ZodDefault<z.ZodNullable<z.ZodArray<z.ZodString>>>;
};

/** `tool_timeout` (seconds per MCP tool call, Python's default 600) and `disabled_tools`. */
export const hostToolKeys: HostToolKeysShape = {
  tool_timeout: z.number().positive().finite().default(600).describe(
    "Seconds a single MCP tool call may take.",
  ),
  disabled_tools: z.array(z.string()).nullable().default(null).describe(
    "Tool names not offered to the model (advertised names, e.g. edit or <toolset>_<tool>).",
  ),
};
