/**
 * The relay's host end: starts the in-sandbox relay (`script.ts`) as one live program of
 * the runtime ({@link Runtime.spawn}) and replays each connection it reports against the
 * host's interception server on 127.0.0.1, so a program in a sandbox with no route to the
 * host (no network, another machine) reaches the model through `http://127.0.0.1:<port>`
 * inside its sandbox. Keys, limits, stall timeouts and cancellation are the server's own:
 * the relay carries bytes and closes what the other side closed.
 *
 * @module
 */
import { connect, type Socket } from "node:net";
import { randomUUID } from "node:crypto";
import { SandboxError } from "../errors.ts";
import type { ProcessExit, Runtime, RuntimeProcess } from "../runtime/runtime.ts";
import { EnvelopeReader } from "../wire/envelope.ts";
import { DATA, decodeFrame, encodeFrame, END, HELLO, OPEN, RESET } from "./frames.ts";
import { RELAY_LAUNCH, RELAY_SCRIPT } from "./script.ts";

/** How long the relay may take to say its port. */
const HELLO_TIMEOUT_MS = 30_000;
/** Largest frame the host accepts (a program's chunk is far smaller). */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** A running relay. */
export interface SandboxRelay {
  /** `endpoint` with its host and port replaced by the relay's inside the sandbox. */
  readonly endpoint: string;
  /** Settles when the relay ended (killed, its session dropped, its sandbox gone). */
  readonly ended: Promise<ProcessExit>;
  /** Bytes the relay carried on the command channel, frames included, both ways. */
  channelBytes(): number;
  /** Closes every connection and ends the relay; idempotent. */
  close(): Promise<void>;
}

/**
 * Starts a relay in `runtime` toward the server of `endpoint` (a loopback URL of this
 * host). Throws a SandboxError when the runtime has no live programs or the relay does not
 * come up (no JavaScript runtime in the sandbox).
 */
export async function openRelay(runtime: Runtime, endpoint: string): Promise<SandboxRelay> {
  if (runtime.spawn === undefined) {
    throw new SandboxError(`The ${runtime.info.type} runtime cannot keep a live program`, {
      hint: "Programs in this runtime cannot reach the model through a relay; " +
        "run them on a runtime whose commands keep their stdin open (local, docker)",
    });
  }
  const target = new URL(endpoint);
  const script = `/tmp/vf-relay-${randomUUID()}.mjs`;
  await runtime.write(script, RELAY_SCRIPT);
  const proc = await runtime.spawn(["sh", "-c", RELAY_LAUNCH, "vf-relay", script]);
  return await new Promise<SandboxRelay>((resolve, reject) => {
    const relay = new HostEnd(proc, target, (port) => {
      clearTimeout(timer);
      resolve(relay.handle(endpoint.replace(/^http:\/\/[^/]+/, `http://127.0.0.1:${port}`)));
    });
    const fail = (why: string) => {
      clearTimeout(timer);
      void relay.close();
      const tail = proc.stderrTail().slice(-3).join(" | ");
      reject(
        new SandboxError(`The model relay in the sandbox did not start: ${why}`, {
          hint: tail === ""
            ? "Check that the sandbox can run sh"
            : `Its stderr: ${tail}. The relay needs bun, node or deno in the sandbox`,
        }),
      );
    };
    const timer = setTimeout(() => fail("no answer in 30 s"), HELLO_TIMEOUT_MS);
    void proc.exited.then((exit) => {
      if (!relay.ready) fail(exit.startError ?? `it exited with code ${exit.exitCode}`);
    });
  });
}

/** The host's side of one relay session. */
class HostEnd {
  readonly #proc: RuntimeProcess;
  readonly #target: URL;
  readonly #sockets = new Map<number, Socket>();
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  #bytes = 0;
  #closed = false;
  ready = false;

  constructor(proc: RuntimeProcess, target: URL, onHello: (port: number) => void) {
    this.#proc = proc;
    this.#target = target;
    this.#writer = proc.stdin.getWriter();
    void this.#read(onHello);
    void proc.exited.then(() => this.#drop());
  }

  handle(endpoint: string): SandboxRelay {
    return {
      endpoint,
      ended: this.#proc.exited,
      channelBytes: () => this.#bytes,
      close: () => this.close(),
    };
  }

  async close(): Promise<void> {
    this.#drop();
    await this.#writer.close().catch(() => {});
    await this.#proc.kill();
  }

  /** Closes every host connection (the relay is gone or closing). */
  #drop(): void {
    this.#closed = true;
    for (const socket of this.#sockets.values()) socket.destroy();
    this.#sockets.clear();
  }

  #send(kind: number, id: number, data?: Uint8Array): void {
    if (this.#closed) return;
    const frame = encodeFrame(kind, id, data);
    this.#bytes += frame.byteLength;
    this.#writer.write(frame).catch(() => this.#drop());
  }

  async #read(onHello: (port: number) => void): Promise<void> {
    const reader = new EnvelopeReader({
      onHeader: (_kind, length) => {
        if (length > MAX_FRAME_BYTES) throw new Error(`relay frame of ${length} bytes`);
      },
    });
    try {
      for await (const chunk of this.#proc.stdout) {
        this.#bytes += chunk.byteLength;
        for (const { flags, data } of reader.push(chunk)) this.#frame(flags, data, onHello);
      }
    } catch {
      // a malformed frame or a broken pipe: the relay is of no further use
    }
    this.#drop();
    void this.#proc.kill();
  }

  #frame(kind: number, payload: Uint8Array, onHello: (port: number) => void): void {
    const { id, data } = decodeFrame(payload);
    if (kind === HELLO) {
      this.ready = true;
      return onHello(id);
    }
    if (kind === OPEN) return this.#open(id);
    const socket = this.#sockets.get(id);
    if (socket === undefined) return;
    if (kind === DATA) socket.write(data);
    else if (kind === END) socket.end();
    else if (kind === RESET) {
      this.#sockets.delete(id);
      socket.destroy();
    }
  }

  #open(id: number): void {
    const socket = connect({
      host: this.#target.hostname,
      port: Number(this.#target.port),
      allowHalfOpen: true,
      noDelay: true,
    });
    this.#sockets.set(id, socket);
    socket.on("data", (d: Uint8Array) => this.#send(DATA, id, d));
    socket.on("end", () => {
      if (this.#sockets.has(id)) this.#send(END, id);
    });
    socket.on("close", () => {
      if (this.#sockets.delete(id)) this.#send(RESET, id);
    });
    socket.on("error", () => {});
  }
}
