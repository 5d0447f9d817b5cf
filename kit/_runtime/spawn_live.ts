/**
 * Platform shim: starts one long-lived program over `node:child_process` whose stdin and
 * stdout stay open as web streams (a protocol peer such as an ACP adapter speaks over
 * them). The child leads its own process group, so {@link LiveProgram.kill} ends the whole
 * tree it started. Only this file sees the Node streams.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { Readable, Writable } from "node:stream";
import { killTree } from "./process_tree.ts";

/** How a live program ended: its exit code (128+N for signal N), or the failure to start. */
export interface LiveExit {
  exitCode: number;
  /** The signal that ended it, when one did. */
  signal: string | null;
  /** Why the program could not be started (exit code 127 or 126), else null. */
  startError: string | null;
}

/** A running program with open pipes. */
export interface LiveProgram {
  /** Process id of the group leader (undefined when it failed to start). */
  readonly pid: number | undefined;
  /** The program's stdin. */
  readonly stdin: WritableStream<Uint8Array>;
  /** The program's stdout. */
  readonly stdout: ReadableStream<Uint8Array>;
  /** Settles once the program exited (never rejects). */
  readonly exited: Promise<LiveExit>;
  /** The last lines the program wrote to stderr (at most {@link STDERR_TAIL_LINES}). */
  stderrTail(): string[];
  /** Kills the whole process group (SIGKILL) and waits for the leader's exit. Idempotent. */
  kill(): Promise<LiveExit>;
}

/** Options of {@link spawnLive}. */
export interface SpawnLiveOptions {
  /** Working directory (absolute). */
  cwd: string;
  /** The child's complete environment (nothing is inherited). */
  env: Record<string, string>;
}

/** Lines of stderr a live program keeps. */
export const STDERR_TAIL_LINES = 40;
/** Characters kept of one stderr line. */
const LINE_CHARS = 2000;

const SIGKILL_NUMBER = constants.signals.SIGKILL ?? 9;

/** Starts `argv` (no shell) with piped stdin, stdout and stderr in its own process group. */
export function spawnLive(argv: readonly string[], options: SpawnLiveOptions): LiveProgram {
  if (argv.length === 0 || typeof argv[0] !== "string" || argv[0] === "") {
    throw new TypeError("Cannot spawn a program: argv is empty");
  }
  const [file, ...args] = argv as [string, ...string[]];
  const child = spawn(file, args, {
    cwd: options.cwd,
    env: options.env,
    shell: false,
    detached: true,
    windowsHide: true,
    stdio: ["pipe", "pipe", "pipe"],
  });
  const tail: string[] = [];
  let partial = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = (lines.pop() ?? "").slice(-LINE_CHARS);
    for (const line of lines) {
      tail.push(line.slice(0, LINE_CHARS));
      if (tail.length > STDERR_TAIL_LINES) tail.shift();
    }
  });
  child.stderr.on("error", () => {});
  child.stdout.on("error", () => {});
  child.stdin.on("error", () => {}); // EPIPE once the child is gone

  let exitInfo: LiveExit | null = null;
  const exited = new Promise<LiveExit>((resolve) => {
    child.on("error", (e: NodeJS.ErrnoException) => {
      if (child.pid !== undefined || exitInfo !== null) return;
      const denied = e.code === "EACCES" || e.code === "EPERM" || e.code === "ENOEXEC";
      exitInfo = {
        exitCode: denied ? 126 : 127,
        signal: null,
        startError: `Cannot run "${file}": ${e.code === "ENOENT" ? "command not found" : e.code}`,
      };
      resolve(exitInfo);
    });
    child.on("exit", (code, signal) => {
      const n = signal ? (constants.signals as Record<string, number | undefined>)[signal] : 0;
      exitInfo = {
        exitCode: signal ? 128 + (n ?? SIGKILL_NUMBER) : code ?? 1,
        signal,
        startError: null,
      };
      resolve(exitInfo);
    });
  });

  const killGroup = () => {
    if (child.pid !== undefined) killTree(child.pid);
  };

  return {
    pid: child.pid,
    stdin: Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
    stdout: Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>,
    exited,
    stderrTail: () => partial === "" ? [...tail] : [...tail, partial],
    kill: async () => {
      // the group may outlive its leader (a grandchild that kept running): kill it always
      killGroup();
      const result = await exited;
      killGroup();
      child.stdout.destroy();
      child.stderr.destroy();
      child.stdin.destroy();
      return result;
    },
  };
}
