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
import { SandboxError } from "../errors.ts";
import type { ProcessExit, Runtime, RuntimeProcess } from "../runtime/runtime.ts";
import { EnvelopeReader } from "../wire/envelope.ts";
import { DATA, decodeFrame, encodeFrame, END, HELLO, OPEN, RESET } from "./frames.ts";
import { installCarrier, relayCarrier } from "./carrier.ts";
import { NO_RUNTIME, RELAY_LAUNCH, RELAY_SCRIPT } from "./script.ts";

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
 * host). A sandbox with no JavaScript runtime gets this host's (`carrier.ts`) the first
 * time. Throws a SandboxError when the runtime has no live programs or the relay does not
 * come up.
 */
export async function openRelay(runtime: Runtime, endpoint: string): Promise<SandboxRelay> {
  if (runtime.spawn === undefined) {
    throw new SandboxError(`The ${runtime.info.type} runtime cannot keep a live program`, {
      hint: "Programs in this runtime cannot reach the model through a relay; " +
        "run them on a runtime whose commands keep their stdin open (local, docker)",
    });
  }
  const carrier = relayCarrier();
  const argv = [
    "sh",
    "-c",
    RELAY_LAUNCH,
    "vf-relay",
    RELAY_SCRIPT,
    typeof carrier === "string" ? "/nonexistent" : carrier.dir,
    typeof carrier === "string" ? "" : carrier.loader ?? "",
    ...(typeof carrier === "string" ? [] : carrier.evalArgs),
  ];
  const first = await startRelay(await runtime.spawn(argv), endpoint);
  if (typeof first !== "string") return first;
  if (typeof carrier === "string") throw noRuntime(`${carrier}`);
  if (first !== carrier.machine) {
    throw noRuntime(
      `the sandbox is ${first || "of an unknown machine type"}, this host ` +
        `${carrier.machine}`,
    );
  }
  await installCarrier(runtime, carrier);
  const second = await startRelay(await runtime.spawn(argv), endpoint);
  if (typeof second === "string") throw noRuntime("its carrier did not start");
  return second;
}

function noRuntime(why: string): SandboxError {
  return new SandboxError(
    `The model relay cannot run in the sandbox: it has no JavaScript runtime, and ${why}`,
    { hint: "Install bun, node or deno in the image, or give the sandbox a route to the host" },
  );
}

/**
 * Waits for the relay's `HELLO`: the relay, or the sandbox's machine type (as `uname -m`
 * says it, maybe empty) when the sandbox has no JavaScript runtime to run it.
 */
function startRelay(proc: RuntimeProcess, endpoint: string): Promise<SandboxRelay | string> {
  const target = new URL(endpoint);
  return new Promise<SandboxRelay | string>((resolve, reject) => {
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
          hint: tail === "" ? "Check that the sandbox can run sh" : `Its stderr: ${tail}`,
        }),
      );
    };
    const timer = setTimeout(() => fail("no answer in 30 s"), HELLO_TIMEOUT_MS);
    void proc.exited.then((exit) => {
      if (relay.ready) return;
      const said = proc.stderrTail().find((l) => l.startsWith(NO_RUNTIME));
      if (exit.exitCode === 127 && said !== undefined) {
        clearTimeout(timer);
        return resolve(said.slice(NO_RUNTIME.length).trim());
      }
      fail(exit.startError ?? `it exited with code ${exit.exitCode}`);
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
