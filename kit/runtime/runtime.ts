/**
 * The runtime contract: where a rollout's commands execute. Implemented by the
 * `local` runtime (subprocesses on this machine) and by remote sandboxes.
 *
 * @module
 */

/** What a finished command returned. */
export interface ProgramResult {
  /** Exit code; 128+signal when killed by a signal; 124 when killed by the timeout. */
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link Runtime.run}. */
export interface RunOptions {
  /** Extra environment variables for this command (on top of the runtime's own). */
  env?: Record<string, string>;
  /** Working directory, relative to the runtime's workdir or absolute. @default the workdir */
  cwd?: string;
  /** Kill the command (its whole process group) after this long. @default no limit */
  timeoutMs?: number;
  /** Cancels the command (kills its process group). */
  signal?: AbortSignal;
  /**
   * The command's stdin: bytes given whole, or a stream whose chunks reach the command as they
   * arrive (see {@link Runtime.streamsStdin}); stdin is closed at the end of either.
   * @default none (stdin closed)
   */
  stdin?: string | Uint8Array | AsyncIterable<Uint8Array>;
}

/** Options of {@link Runtime.spawn}. */
export interface SpawnOptions {
  /** Extra environment variables for this program (on top of the runtime's own). */
  env?: Record<string, string>;
  /** Working directory, relative to the runtime's workdir or absolute. @default the workdir */
  cwd?: string;
}

/** How a program started by {@link Runtime.spawn} ended. */
export interface ProcessExit {
  /** Exit code; 128+N when signal N ended it; 127/126 when it could not be started. */
  exitCode: number;
  /** Why it could not be started, else null. */
  startError: string | null;
}

/**
 * A program running in the runtime with its stdin and stdout open: a peer that speaks a
 * protocol over them (an ACP adapter). Stopping the runtime kills it.
 */
export interface RuntimeProcess {
  /** The program's stdin. */
  readonly stdin: WritableStream<Uint8Array>;
  /** The program's stdout. */
  readonly stdout: ReadableStream<Uint8Array>;
  /** Settles when the program exited (never rejects). */
  readonly exited: Promise<ProcessExit>;
  /** The last lines the program wrote to stderr. */
  stderrTail(): string[];
  /** Kills the program with everything it started, and waits for it. Idempotent. */
  kill(): Promise<ProcessExit>;
}

/** Options of {@link Runtime.read}. */
export interface ReadOptions {
  /** Refuse (throw) when the file is larger than this. @default no limit */
  maxBytes?: number;
}

/** Identity of a runtime instance as recorded in a trace. */
export interface RuntimeInfo {
  /** The runtime type (`local`, `prime`, `modal`). */
  type: string;
  /** Provider id of the sandbox (or the local workdir), null before start. */
  id: string | null;
}

/**
 * One execution environment for one rollout. `stop()` is best effort and never throws;
 * `stopConfirmed()` frees the resource or throws. Both are idempotent.
 */
export interface Runtime {
  readonly info: RuntimeInfo;
  /** True once a stop has been confirmed (reset by a later `start()`). */
  readonly stopped: boolean;
  /** True for runtimes on this machine (no lifetime cap). */
  readonly isLocal: boolean;
  /**
   * True when a streamed `stdin` reaches the command as it arrives. False or absent: the
   * runtime can only take stdin whole, so a stream is read to its end (or until the run's
   * signal aborts) before the command starts.
   */
  readonly streamsStdin?: boolean;
  /** Hard lifetime in seconds (remote runtimes only), else null. */
  readonly timeoutS: number | null;
  /** Absolute path of the working directory inside the runtime. */
  readonly workdir: string;
  /** Provisions the runtime. */
  start(options?: { signal?: AbortSignal }): Promise<void>;
  /** Runs `argv` (no shell) and waits for it. Never throws for a non-zero exit. */
  run(argv: string[], options?: RunOptions): Promise<ProgramResult>;
  /**
   * Starts `argv` (no shell) with its stdin and stdout open. Optional: a runtime that
   * cannot keep a live program (only run-to-completion commands) leaves it out, and a
   * harness that needs one refuses that runtime.
   */
  spawn?(argv: string[], options?: SpawnOptions): Promise<RuntimeProcess>;
  /**
   * Optional: true when programs in a runtime that is not local still reach this host's
   * 127.0.0.1 (a container on the host's network), so they need no relay to the model.
   */
  readonly hostLoopback?: boolean;
  /** Writes a file (parents created); relative paths are under the workdir. */
  write(path: string, data: string | Uint8Array): Promise<void>;
  /** Reads a file; relative paths are under the workdir. */
  read(path: string, options?: ReadOptions): Promise<Uint8Array>;
  /** True while the runtime can run commands. */
  alive(): Promise<boolean>;
  /** Best-effort teardown; never throws; idempotent. */
  stop(): Promise<void>;
  /** Teardown that either frees the resource or throws; idempotent once confirmed. */
  stopConfirmed(): Promise<void>;
}

/** Exit code a command gets when the runtime killed it for its timeout (as `timeout(1)`). */
export { TIMEOUT_EXIT_CODE } from "../_runtime/spawn.ts";

/**
 * Caps a harness timeout to a remote runtime's lifetime: `Math.trunc(runtime timeout)`.
 * No timeout (null) and local runtimes are left unchanged (the sandbox's own lifetime
 * still bounds a remote rollout). Returns the effective seconds and whether it was capped.
 */
export function capHarnessTimeout(
  harnessTimeoutS: number | null,
  runtime: Pick<Runtime, "isLocal" | "timeoutS">,
): { timeoutS: number | null; capped: boolean } {
  if (harnessTimeoutS === null || runtime.isLocal) {
    return { timeoutS: harnessTimeoutS, capped: false };
  }
  const cap = Math.trunc(runtime.timeoutS ?? 86400);
  if (harnessTimeoutS > cap) return { timeoutS: cap, capped: true };
  return { timeoutS: harnessTimeoutS, capped: false };
}
