/**
 * Toolsets written in TypeScript: tools with zod input schemas over a per-rollout state
 * object. The definition is plain data; `server.ts` serves it as a real MCP server (the
 * official `@modelcontextprotocol/sdk`), in-process with a rollout or as a separate stdio
 * or streamable HTTP server, and the scoring reads the rollout's state either way.
 *
 * @module
 */
import type { z } from "zod";

/** The resource a kit-served toolset exposes its rollout state under (JSON text). */
export const STATE_URI = "vf://toolset/state";

/** What a tool's `run` receives besides its arguments. */
export interface ToolRunContext<S> {
  /** This rollout's state (one per MCP session); mutate it freely. */
  state: S;
  /** Aborted when the client cancels the call or the session closes. */
  signal: AbortSignal;
}

/** One tool of a toolset. */
export interface ToolsetTool<S, Shape extends z.ZodRawShape = z.ZodRawShape> {
  description: string;
  /** The input schema: the fields of a zod object (advertised as JSON Schema). */
  input: Shape;
  /** Runs a call; returned text is the result, a throw is an error result the model sees. */
  run(
    args: z.output<z.ZodObject<Shape>>,
    ctx: ToolRunContext<S>,
  ): string | Promise<string>;
}

/** A toolset written in TypeScript (made by {@link defineToolset}). */
export interface ToolsetDefinition<S = unknown> {
  kind: "toolset";
  /** Server name; tools are advertised as `<name>_<tool>` unless the source says otherwise. */
  name: string;
  description?: string;
  /** A fresh state for one rollout (one MCP session). */
  state(): S;
  // deno-lint-ignore no-explicit-any
  tools: Record<string, ToolsetTool<S, any>>;
}

/** Defines a toolset; `name` and tool names are letters, digits, `_` and `-`. */
export function defineToolset<S>(spec: Omit<ToolsetDefinition<S>, "kind">): ToolsetDefinition<S> {
  checkName("toolset", spec.name);
  for (const name of Object.keys(spec.tools)) checkName(`tool of toolset '${spec.name}'`, name);
  return { ...spec, kind: "toolset" };
}

/** Types one tool's `run` arguments from its schema (use inside {@link defineToolset}). */
export function tool<S, Shape extends z.ZodRawShape>(
  spec: ToolsetTool<S, Shape>,
): ToolsetTool<S, Shape> {
  return spec;
}

/** True for a value made by {@link defineToolset} (structural, so bundled copies work). */
export function isToolsetDefinition(value: unknown): value is ToolsetDefinition {
  const v = value as { kind?: unknown; name?: unknown; tools?: unknown } | null;
  return typeof v === "object" && v !== null && v.kind === "toolset" &&
    typeof v.name === "string" && typeof v.tools === "object" && v.tools !== null;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;

function checkName(what: string, name: string): void {
  if (!NAME.test(name)) {
    throw new TypeError(
      `invalid ${what} name '${name}': use 1-64 letters, digits, '_' or '-'`,
    );
  }
}
