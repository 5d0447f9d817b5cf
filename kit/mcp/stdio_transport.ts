/**
 * The stdio transport of a toolset server the rollout starts: an MCP SDK `Transport` over
 * the kit's live-program shim, so the server leads its own process group and closing kills
 * everything it started (the SDK's own stdio client signals only the process it spawned).
 * A line that is not a JSON-RPC message is reported through `onerror` and skipped.
 *
 * @module
 */
import { Buffer } from "node:buffer";
// @ts-types="@modelcontextprotocol/sdk/shared/stdio"
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
// @ts-types="@modelcontextprotocol/sdk/shared/transport"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
// @ts-types="@modelcontextprotocol/sdk/types"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { type LiveProgram, spawnLive } from "../_runtime/spawn_live.ts";
import { getEnv } from "../_runtime/env.ts";

/** Host variables a server inherits (as the SDK's default environment). */
const INHERITED = ["HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG"];

/** Milliseconds a server gets to exit on its own once its stdin closed. */
const GRACE_MS = 1000;

/** The environment of a started server: a few host variables, then `extra`. */
export function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED) {
    const value = getEnv(name);
    if (value !== undefined) env[name] = value;
  }
  return { ...env, ...extra };
}

/** A server process spoken to over its stdin/stdout, one JSON-RPC message a line. */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #argv: string[];
  readonly #cwd: string;
  readonly #env: Record<string, string>;
  #program: LiveProgram | undefined;
  #writer: WritableStreamDefaultWriter<Uint8Array> | undefined;
  #notified = false;

  constructor(argv: string[], options: { cwd: string; env: Record<string, string> }) {
    this.#argv = argv;
    this.#cwd = options.cwd;
    this.#env = options.env;
  }

  /** The last lines the server wrote to stderr. */
  stderrTail(): string[] {
    return this.#program?.stderrTail() ?? [];
  }

  start(): Promise<void> {
    const program = spawnLive(this.#argv, { cwd: this.#cwd, env: this.#env });
    this.#program = program;
    this.#writer = program.stdin.getWriter();
    this.#writer.closed.catch(() => {}); // EPIPE once the server is gone
    void this.#read(program.stdout);
    void program.exited.then((exit) => {
      if (exit.startError) this.onerror?.(new Error(exit.startError));
      this.#notifyClosed();
    });
    return Promise.resolve();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.#writer || this.#notified) throw new Error("the server process is not running");
    await this.#writer.write(new TextEncoder().encode(serializeMessage(message)));
  }

  async close(): Promise<void> {
    const program = this.#program;
    if (program) {
      await this.#writer?.close().catch(() => {});
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        program.exited,
        new Promise((resolve) => (timer = setTimeout(resolve, GRACE_MS))),
      ]);
      clearTimeout(timer);
      await program.kill(); // the whole group, also when the leader already exited
    }
    this.#notifyClosed();
  }

  async #read(stdout: ReadableStream<Uint8Array>): Promise<void> {
    const buffer = new ReadBuffer();
    const reader = stdout.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        buffer.append(Buffer.from(value));
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = buffer.readMessage(); // consumes the line before parsing it
          } catch (err) {
            this.onerror?.(err instanceof Error ? err : new Error(String(err)));
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      }
    } catch {
      // the stream ends with the process; its exit closes the transport
    }
  }

  #notifyClosed(): void {
    if (this.#notified) return;
    this.#notified = true;
    this.onclose?.();
  }
}
