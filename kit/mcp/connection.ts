/**
 * The client side of one rollout's toolset: an MCP client (official SDK) connected to a
 * TypeScript toolset in this process, to a server it starts over stdio, or to a server at
 * a URL. A call never hangs and never throws for what the server does: a crash, a timeout
 * or a malformed JSON-RPC message is an error outcome the model is shown. Closing stops the
 * server process it started.
 *
 * @module
 */
// @ts-types="@modelcontextprotocol/sdk/client/index"
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
// @ts-types="@modelcontextprotocol/sdk/client/streamableHttp"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
// @ts-types="@modelcontextprotocol/sdk/inMemory"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { errorMessage, ToolsetError } from "../errors.ts";
import { sourceName, sourcePrefix, type ToolsetSource } from "./source.ts";
import { STATE_URI } from "./toolset.ts";
import { toolsetServer } from "./server.ts";
import { ProcessTransport, serverEnv } from "./stdio_transport.ts";
import process from "node:process";

/** A tool as the server lists it. */
export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** What one call gave: the result text, or the error the model is shown. */
export type ToolOutcome = { text: string; error: null } | { text: string; error: string };

/** A connected toolset. */
export interface ToolsetConnection {
  readonly name: string;
  /** Advertised prefix; null: bare names. */
  readonly prefix: string | null;
  readonly tools: McpToolInfo[];
  /** Calls `tool`; resolves an error outcome on any failure but an abort of `signal`. */
  call(
    tool: string,
    args: Record<string, unknown>,
    options: { timeoutMs: number; signal: AbortSignal },
  ): Promise<ToolOutcome>;
  /** The rollout's toolset state: in-process the live object, else read over MCP. */
  state(timeoutMs: number): Promise<unknown>;
  /** Disconnects and stops the server process it started; never throws. */
  close(): Promise<void>;
}

/** Options of {@link openToolset}. */
export interface OpenToolsetOptions {
  /** Budget of the connect + initialize + tools/list handshake. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** Characters of a server's stderr an error message keeps. */
const STDERR_TAIL = 500;

/** Connects to `source` and lists its tools; throws a {@link ToolsetError} when it cannot. */
export async function openToolset(
  source: ToolsetSource,
  options: OpenToolsetOptions,
): Promise<ToolsetConnection> {
  const name = sourceName(source);
  const client = new Client({ name: "verifiers-ts", version: "1" });
  let live: unknown = undefined;
  let transport: Transport;
  let stderrTail = (): string[] => [];
  if ("toolset" in source) {
    live = source.toolset.state();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await toolsetServer(source.toolset, live).connect(serverSide);
    transport = clientSide;
  } else if ("command" in source) {
    const stdio = new ProcessTransport(source.command, {
      cwd: source.cwd ?? process.cwd(),
      env: serverEnv(source.env),
    });
    stderrTail = () => stdio.stderrTail();
    transport = stdio;
  } else {
    transport = new StreamableHTTPClientTransport(new URL(source.url), {
      requestInit: { headers: source.headers ?? {} },
    });
  }

  // A message that is not JSON-RPC fails the calls in flight at once instead of letting
  // them wait for their timeout; a closed transport fails them in the SDK itself.
  const inFlight = new Set<AbortController>();
  let broken: string | null = null;
  client.onerror = (err) => {
    broken = errorMessage(err);
    for (const c of inFlight) c.abort(new Error(`malformed message from the server: ${broken}`));
  };
  let closed = false;
  client.onclose = () => {
    closed = true;
  };
  const close = async (): Promise<void> => {
    if (transport instanceof StreamableHTTPClientTransport) {
      await withTimeout(transport.terminateSession(), 2000).catch(() => {});
    }
    await client.close().catch(() => {});
  };

  const detail = () => {
    const tail = stderrTail().join("\n").trim().slice(-STDERR_TAIL);
    return tail ? `; stderr: ${tail}` : "";
  };
  let tools: McpToolInfo[];
  try {
    const opts = {
      timeout: options.timeoutMs,
      ...(options.signal ? { signal: options.signal } : {}),
    };
    await client.connect(transport, opts);
    const listed = await client.listTools(undefined, opts);
    tools = listed.tools.map((t) => ({
      name: t.name,
      description: t.description ?? "",
      inputSchema: { ...t.inputSchema } as Record<string, unknown>,
    }));
  } catch (err) {
    await close();
    options.signal?.throwIfAborted();
    throw new ToolsetError(`toolset '${name}' failed to start: ${errorMessage(err)}${detail()}`);
  }

  return {
    name,
    prefix: sourcePrefix(source),
    tools,
    async call(tool, args, { timeoutMs, signal }) {
      if (closed) return fail(`the toolset server '${name}' is gone${detail()}`);
      const local = new AbortController();
      const onAbort = () => local.abort(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      inFlight.add(local);
      try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: timeoutMs,
          signal: local.signal,
        });
        const text = contentText(result.content);
        return result.isError ? fail(text || "the tool reported an error") : { text, error: null };
      } catch (err) {
        signal.throwIfAborted();
        const why = local.signal.aborted ? errorMessage(local.signal.reason) : errorMessage(err);
        return fail(`${why}${closed ? detail() : ""}`);
      } finally {
        inFlight.delete(local);
        signal.removeEventListener("abort", onAbort);
      }
    },
    async state(timeoutMs) {
      if ("toolset" in source) return live;
      if (closed) return undefined;
      try {
        const res = await client.readResource({ uri: STATE_URI }, { timeout: timeoutMs });
        const first = res.contents[0];
        return first && "text" in first ? JSON.parse(first.text) : undefined;
      } catch {
        return undefined; // a server that keeps no state the kit can read
      }
    },
    close,
  };
}

function fail(error: string): ToolOutcome {
  return { text: `Error: ${error}`, error };
}

/** The text of an MCP result's content blocks (non-text blocks as JSON). */
function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content.map((b: { type?: string; text?: string }) =>
    b?.type === "text" && typeof b.text === "string" ? b.text : JSON.stringify(b)
  ).join("\n");
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms))),
  ]).finally(() => clearTimeout(timer));
}
