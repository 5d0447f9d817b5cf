/**
 * Platform shim: runs one program as a subprocess over `node:child_process` (the same
 * code path on Deno, Bun and Node). The child leads its own process group, so a timeout
 * or an abort kills the whole tree it started, grandchildren included, even those that
 * left the group.
 *
 * @module
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { constants } from "node:os";
import { quote } from "../util/quote.ts";
import { killTree } from "./process_tree.ts";

/** Options of {@link spawnProgram}. */
export interface SpawnProgramOptions {
  /** Working directory of the child (absolute). */
  cwd: string;
  /** The child's complete environment (nothing is inherited). */
  env: Record<string, string>;
  /** Kill the process group after this long; the result gets exit code 124. @default no limit */
  timeoutMs?: number | undefined;
  /** Aborting kills the process group; the result gets 128+9. */
  signal?: AbortSignal | undefined;
  /**
   * The child's stdin: bytes written whole, or a stream whose chunks are written as they
   * arrive; stdin is closed at its end (and no longer fed once the child is gone).
   * @default none (stdin reads EOF)
   */
  stdin?: string | Uint8Array | AsyncIterable<Uint8Array> | undefined;
  /** Keep at most this many bytes of stdout and of stderr each; the rest is dropped. @default no limit */
  maxOutputBytes?: number;
  /** Also return the raw bytes of stdout and stderr (`stdoutBytes`, `stderrBytes`). @default false */
  keepBytes?: boolean;
}

/**
 * Exit code a command gets when it is killed for its timeout (as `timeout(1)`); the
 * runtime contract (kit/runtime/runtime.ts) exports it.
 */
export const TIMEOUT_EXIT_CODE = 124;

/** What {@link spawnProgram} returns: a `ProgramResult` (kit/runtime/runtime.ts) and more. */
export interface SpawnProgramResult {
  /** Exit code; 128+signal when killed by a signal; 124 when killed by the timeout. */
  exitCode: number;
  stdout: string;
  stderr: string;
  /** True when the child was killed for `timeoutMs`. */
  timedOut: boolean;
  /** True when the child was killed (or never started) because `signal` aborted. */
  aborted: boolean;
  /** True when stdout or stderr went past `maxOutputBytes` and was cut. */
  truncated: boolean;
  /** The bytes of stdout, when `keepBytes` was set. */
  stdoutBytes?: Uint8Array;
  /** The bytes of stderr, when `keepBytes` was set. */
  stderrBytes?: Uint8Array;
}

/** Exit code of a program that cannot be found (as a shell reports it). */
const NOT_FOUND_EXIT_CODE = 127;
/** Exit code of a program that was found but cannot be executed (as a shell reports it). */
const NOT_EXECUTABLE_EXIT_CODE = 126;

const SIGKILL_NUMBER = constants.signals.SIGKILL ?? 9;
/** How long to wait for the pipes to close after a kill before giving up on them. */
const KILL_GRACE_MS = 2000;

/**
 * Writes `input`'s chunks to `sink` as they arrive, waiting for the pipe to drain, and closes
 * it at the end. Stops when the child is gone (`done`) or the pipe breaks; a source that
 * throws closes stdin like an end. Never rejects.
 */
async function feedStdin(
  sink: NodeJS.WritableStream & { destroyed?: boolean; writableEnded?: boolean },
  input: AsyncIterable<Uint8Array>,
  done: () => boolean,
): Promise<void> {
  const gone = () => done() || sink.destroyed === true || sink.writableEnded === true;
  try {
    for await (const chunk of input) {
      if (gone()) return;
      if (!sink.write(chunk)) {
        await new Promise<void>((resolve) => {
          const go = () => {
            sink.off("drain", go);
            sink.off("close", go);
            resolve();
          };
          sink.on("drain", go);
          sink.on("close", go);
        });
      }
    }
  } catch {
    // the source failed: the child reads end of file
  }
  if (!gone()) sink.end();
}

/**
 * Runs `argv` (no shell) and waits for it to finish and its output pipes to close. Never
 * throws for a failure of the program itself: a non-zero exit, a kill, or a failure to
 * start (127 when the program is missing, 126 when it cannot be executed, with the reason
 * on stderr) all come back as a result. Exit code: the child's code, 128+N when a signal N
 * killed it, 124 when it was killed for the timeout.
 */
export function spawnProgram(
  argv: readonly string[],
  options: SpawnProgramOptions,
): Promise<SpawnProgramResult> {
  if (argv.length === 0 || typeof argv[0] !== "string" || argv[0] === "") {
    throw new TypeError("Cannot spawn a program: argv is empty");
  }
  const [file, ...args] = argv as [string, ...string[]];
  if (options.signal?.aborted) {
    return Promise.resolve({
      exitCode: 128 + SIGKILL_NUMBER,
      stdout: "",
      stderr: "",
      timedOut: false,
      aborted: true,
      truncated: false,
    });
  }

  return new Promise<SpawnProgramResult>((resolve) => {
    const limit = options.maxOutputBytes ?? Infinity;
    const out = new OutputCollector(limit);
    const err = new OutputCollector(limit);
    let timedOut = false;
    let aborted = false;
    let settled = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let graceTimer: ReturnType<typeof setTimeout> | undefined;
    let exitInfo: { code: number | null; signal: string | null } | null = null;

    const child: ChildProcess = spawn(file, args, {
      cwd: options.cwd,
      env: options.env,
      shell: false,
      detached: true,
      windowsHide: true,
      stdio: [options.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
    });

    const onAbort = () => {
      aborted = true;
      kill();
    };

    const finish = (result: Pick<SpawnProgramResult, "exitCode" | "stdout" | "stderr">) => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      options.signal?.removeEventListener("abort", onAbort);
      child.stdout?.removeAllListeners("data");
      child.stderr?.removeAllListeners("data");
      const truncated = out.truncated || err.truncated;
      resolve(
        options.keepBytes
          ? {
            ...result,
            timedOut,
            aborted,
            truncated,
            stdoutBytes: out.bytes(),
            stderrBytes: err.bytes(),
          }
          : { ...result, timedOut, aborted, truncated },
      );
    };

    const exitCodeOf = (code: number | null, signal: string | null): number => {
      if (timedOut) return TIMEOUT_EXIT_CODE;
      if (signal) {
        const n = (constants.signals as Record<string, number | undefined>)[signal];
        return 128 + (n ?? SIGKILL_NUMBER);
      }
      if (aborted && code === null) return 128 + SIGKILL_NUMBER;
      return code ?? 1;
    };

    const kill = () => {
      if (settled) return;
      const pid = child.pid;
      if (pid !== undefined) killTree(pid);
      // Output pipes may be held open by a process that left the group; do not wait forever.
      if (graceTimer === undefined) {
        graceTimer = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          const info = exitInfo ?? { code: null, signal: "SIGKILL" };
          finish({
            exitCode: exitCodeOf(info.code, info.signal),
            stdout: out.text(),
            stderr: err.text(),
          });
        }, KILL_GRACE_MS);
      }
    };

    child.stdout?.on("data", (chunk: Uint8Array) => out.push(chunk));
    child.stderr?.on("data", (chunk: Uint8Array) => err.push(chunk));
    child.stdout?.on("error", () => {});
    child.stderr?.on("error", () => {});

    child.on("error", (e: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return; // a running child: "close" settles it
      const code = e.code === "EACCES" || e.code === "EPERM" || e.code === "ENOEXEC"
        ? NOT_EXECUTABLE_EXIT_CODE
        : NOT_FOUND_EXIT_CODE;
      const reason = e.code !== "ENOENT"
        ? (e.code ?? e.message)
        : existsSync(options.cwd)
        ? "command not found"
        : `working directory ${quote(options.cwd)} does not exist`;
      finish({ exitCode: code, stdout: "", stderr: `Cannot run ${quote(file)}: ${reason}\n` });
    });
    child.on("exit", (code, signal) => {
      exitInfo = { code, signal };
    });
    child.on("close", (code, signal) => {
      if (child.pid === undefined) return; // spawn failure, settled by "error"
      const info = exitInfo ?? { code, signal };
      finish({
        exitCode: exitCodeOf(info.code, info.signal),
        stdout: out.text(),
        stderr: err.text(),
      });
    });

    if (child.stdin) {
      child.stdin.on("error", () => {}); // EPIPE when the child does not read its input
      const input = options.stdin;
      if (input === undefined || typeof input === "string" || input instanceof Uint8Array) {
        child.stdin.end(input);
      } else void feedStdin(child.stdin, input, () => settled);
    }
    if (options.timeoutMs !== undefined && Number.isFinite(options.timeoutMs)) {
      timer = setTimeout(() => {
        timer = undefined;
        timedOut = true;
        kill();
      }, Math.max(0, options.timeoutMs));
    }
    options.signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Collects the bytes of one output stream up to a limit, then decodes them as UTF-8. */
class OutputCollector {
  readonly #limit: number;
  readonly #chunks: Uint8Array[] = [];
  #size = 0;
  truncated = false;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(chunk: Uint8Array): void {
    const room = this.#limit - this.#size;
    if (room <= 0) {
      if (chunk.byteLength > 0) this.truncated = true;
      return;
    }
    const kept = chunk.byteLength > room ? chunk.subarray(0, room) : chunk;
    if (kept !== chunk) this.truncated = true;
    // Copy: some runtimes reuse the chunk's buffer.
    this.#chunks.push(new Uint8Array(kept));
    this.#size += kept.byteLength;
  }

  bytes(): Uint8Array {
    if (this.#chunks.length === 1) return this.#chunks[0]!;
    const all = new Uint8Array(this.#size);
    let offset = 0;
    for (const c of this.#chunks) {
      all.set(c, offset);
      offset += c.byteLength;
    }
    this.#chunks.splice(0, this.#chunks.length, all);
    return all;
  }

  text(): string {
    return new TextDecoder("utf-8", { ignoreBOM: true }).decode(this.bytes());
  }
}
