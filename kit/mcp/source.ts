/**
 * Where a rollout's toolset comes from, as a taskset or task declares it: a TypeScript
 * toolset run with the rollout, an MCP server started by command (stdio), or an MCP server
 * already running at a URL (streamable HTTP).
 *
 * @module
 */
import { isToolsetDefinition, type ToolsetDefinition } from "./toolset.ts";

/** Keys every source takes. */
export interface ToolsetSourceBase {
  /**
   * The advertised name prefix: tools are offered as `<prefix>_<tool>`; null offers them
   * bare. @default the toolset's name
   */
  prefix?: string | null;
  /** Seconds the server gets to start and answer initialize and tools/list. @default 60 */
  startTimeoutS?: number;
}

/** A TypeScript toolset run in this process, next to the host-side agent loop. */
export interface InlineToolsetSource extends ToolsetSourceBase {
  // deno-lint-ignore no-explicit-any
  toolset: ToolsetDefinition<any>;
}

/** An MCP server this rollout starts as a child process and speaks to over stdio. */
export interface CommandToolsetSource extends ToolsetSourceBase {
  name: string;
  /** Program and arguments, e.g. `["npx", "some-mcp-server"]`. */
  command: string[];
  /** Extra environment of the server (the host's default safe variables are kept). */
  env?: Record<string, string>;
  /** Working directory. @default the host's */
  cwd?: string;
}

/** An MCP server already running, reached over streamable HTTP. */
export interface UrlToolsetSource extends ToolsetSourceBase {
  name: string;
  /** The MCP endpoint, e.g. `http://127.0.0.1:8000/mcp`. */
  url: string;
  headers?: Record<string, string>;
}

/** One toolset of a rollout. */
export type ToolsetSource = InlineToolsetSource | CommandToolsetSource | UrlToolsetSource;

/** The server name of a source. */
export function sourceName(source: ToolsetSource): string {
  return "toolset" in source ? source.toolset.name : source.name;
}

/** The advertised prefix of a source (null: bare tool names). */
export function sourcePrefix(source: ToolsetSource): string | null {
  return source.prefix === undefined ? sourceName(source) : source.prefix;
}

/** Checks a declared source list: its shape and distinct names; throws a TypeError. */
export function checkSources(sources: unknown, where: string): ToolsetSource[] {
  if (!Array.isArray(sources)) throw new TypeError(`${where} must be a list of toolsets`);
  const seen = new Set<string>();
  for (const [i, s] of sources.entries()) {
    const at = `${where}[${i}]`;
    if (typeof s !== "object" || s === null) throw new TypeError(`${at} is not a toolset`);
    const src = s as Record<string, unknown>;
    const kinds = ["toolset", "command", "url"].filter((k) => src[k] !== undefined);
    if (kinds.length !== 1) {
      throw new TypeError(`${at} needs exactly one of \`toolset\`, \`command\` or \`url\``);
    }
    if (src.toolset !== undefined && !isToolsetDefinition(src.toolset)) {
      throw new TypeError(`${at}.toolset is not made by defineToolset`);
    }
    if (src.toolset === undefined && (typeof src.name !== "string" || src.name === "")) {
      throw new TypeError(`${at} needs a \`name\``);
    }
    if (
      src.command !== undefined &&
      (!Array.isArray(src.command) || src.command.length === 0 ||
        !src.command.every((a) => typeof a === "string"))
    ) {
      throw new TypeError(`${at}.command must be a non-empty list of strings`);
    }
    if (src.url !== undefined && !/^https?:\/\//.test(String(src.url))) {
      throw new TypeError(`${at}.url must be an http(s) URL`);
    }
    if (
      src.startTimeoutS !== undefined &&
      !(typeof src.startTimeoutS === "number" && src.startTimeoutS > 0)
    ) {
      throw new TypeError(`${at}.startTimeoutS must be a positive number of seconds`);
    }
    const name = sourceName(s as ToolsetSource);
    if (seen.has(name)) throw new TypeError(`${at}: duplicate toolset name '${name}'`);
    seen.add(name);
  }
  return sources as ToolsetSource[];
}
