/**
 * Real processes for the Modal fake's sandboxes: each exec'd command runs on this machine
 * (its own process group, in its sandbox's network namespace where one is made), with stdin fed by offset-addressed writes until EOF, stdout and
 * stderr kept as append-only byte logs that can be read from any offset while they grow,
 * and an exit status of a code or a signal number, as the task command router reports it.
 *
 * @module
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { constants } from "node:os";
import process from "node:process";

/** An append-only byte log with readers waiting for more. */
export class ByteLog {
  readonly #chunks: Uint8Array[] = [];
  #length = 0;
  #closed = false;
  #waiters: (() => void)[] = [];

  get length(): number {
    return this.#length;
  }

  get closed(): boolean {
    return this.#closed;
  }

  append(bytes: Uint8Array): void {
    if (this.#closed || bytes.byteLength === 0) return;
    this.#chunks.push(new Uint8Array(bytes));
    this.#length += bytes.byteLength;
    this.#wake();
  }

  close(): void {
    this.#closed = true;
    this.#wake();
  }

  /** The bytes from `offset` to the current end. */
  slice(offset: number): Uint8Array {
    const out = new Uint8Array(Math.max(0, this.#length - offset));
    let pos = 0;
    let o = 0;
    for (const c of this.#chunks) {
      const end = pos + c.byteLength;
      if (end > offset) {
        const from = Math.max(0, offset - pos);
        out.set(c.subarray(from), o);
        o += c.byteLength - from;
      }
      pos = end;
    }
    return out;
  }

  /** Resolves when data is appended or the log closes. */
  changed(): Promise<void> {
    return new Promise((r) => this.#waiters.push(r));
  }

  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
}

/** How an exit is reported: a code, or the number of the signal that killed it. */
export interface ExitStatus {
  code?: number;
  signal?: number;
}

/** Options of {@link FakeProcess}. */
export interface FakeProcessOptions {
  cwd: string;
  env: Record<string, string>;
  /** `pipe` collects, `devnull` drops, `stdout` (stderr only) merges into stdout. */
  stdout: "pipe" | "devnull";
  stderr: "pipe" | "devnull" | "stdout";
  /** Kill the process group after this many seconds (signal 9). */
  timeoutS?: number | undefined;
  /** The command as started in the sandbox's network (sandbox_netns.ts). @default as is */
  network?: (argv: string[]) => string[];
}

/** One exec'd command. */
export class FakeProcess {
  readonly argv: string[];
  readonly stdout = new ByteLog();
  readonly stderr = new ByteLog();
  readonly done: Promise<ExitStatus>;
  #exit: ExitStatus | null = null;
  #child: ChildProcess | null = null;
  #stdinOffset = 0;
  #stdinClosed = false;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(argv: string[], options: FakeProcessOptions) {
    this.argv = argv;
    let settle: (s: ExitStatus) => void = () => {};
    this.done = new Promise((r) => (settle = r));
    const finish = (s: ExitStatus) => {
      if (this.#exit !== null) return;
      this.#exit = s;
      if (this.#timer !== undefined) clearTimeout(this.#timer);
      settle(s);
    };
    let child: ChildProcess;
    const started = options.network?.(argv) ?? argv;
    try {
      child = spawn(started[0]!, started.slice(1), {
        cwd: options.cwd,
        env: options.env,
        detached: true,
        stdio: ["pipe", "pipe", "pipe"],
      });
    } catch (e) {
      this.stderr.append(new TextEncoder().encode(`exec failed: ${String(e)}\n`));
      this.stdout.close();
      this.stderr.close();
      finish({ code: 127 });
      return;
    }
    this.#child = child;
    const out = options.stdout === "pipe" ? this.stdout : null;
    const err = options.stderr === "pipe" ? this.stderr : options.stderr === "stdout" ? out : null;
    let open = 2;
    const closeOne = () => {
      if (--open === 0) {
        this.stdout.close();
        this.stderr.close();
      }
    };
    child.stdout?.on("data", (c: Uint8Array) => out?.append(c));
    child.stderr?.on("data", (c: Uint8Array) => err?.append(c));
    child.stdout?.on("close", closeOne);
    child.stderr?.on("close", closeOne);
    child.stdout?.on("error", () => {});
    child.stderr?.on("error", () => {});
    child.stdin?.on("error", () => {});
    child.on("error", (e: NodeJS.ErrnoException) => {
      if (child.pid !== undefined) return;
      this.stderr.append(new TextEncoder().encode(`exec "${argv[0]}": ${e.code ?? e.message}\n`));
      this.stdout.close();
      this.stderr.close();
      finish({ code: e.code === "ENOENT" ? 127 : 126 });
    });
    child.on("exit", (code, signal) => {
      if (signal) {
        finish({ signal: (constants.signals as Record<string, number>)[signal] ?? 9 });
      } else finish({ code: code ?? 0 });
    });
    if (options.timeoutS !== undefined && options.timeoutS > 0) {
      this.#timer = setTimeout(() => this.killGroup(), options.timeoutS * 1000);
    }
  }

  /** The exit status once the process ended, else null. */
  get exit(): ExitStatus | null {
    return this.#exit;
  }

  /** Bytes of stdin accepted so far. */
  get stdinOffset(): number {
    return this.#stdinOffset;
  }

  /**
   * An offset-addressed stdin write: bytes before the current offset are duplicates and
   * ignored; a gap after it is refused (returns false). `eof` closes stdin.
   */
  writeStdin(offset: number, data: Uint8Array, eof: boolean): boolean {
    if (offset > this.#stdinOffset) return false;
    const fresh = data.subarray(this.#stdinOffset - offset);
    const stdin = this.#child?.stdin;
    if (fresh.byteLength > 0 && !this.#stdinClosed) {
      stdin?.write(fresh);
      this.#stdinOffset += fresh.byteLength;
    }
    if (eof && !this.#stdinClosed) {
      this.#stdinClosed = true;
      stdin?.end();
    }
    return true;
  }

  /** SIGKILLs the process group. */
  killGroup(): void {
    const pid = this.#child?.pid;
    if (pid === undefined || this.#exit !== null) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      try {
        this.#child?.kill("SIGKILL");
      } catch {
        // gone
      }
    }
  }
}

/** The environment variable that marks every process of a fake sandbox. */
export const SANDBOX_TAG_VAR = "VF_FAKE_MODAL_SANDBOX";

/**
 * SIGKILLs every process on this machine whose environment carries
 * `VF_FAKE_MODAL_SANDBOX=<tag>` (what a container's end does to all its processes, even
 * those that left the exec's process group). Uses `/proc`; returns how many were signalled.
 */
export function killTagged(tag: string): number {
  const needle = `${SANDBOX_TAG_VAR}=${tag}`;
  let n = 0;
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((d) => /^\d+$/.test(d));
  } catch {
    return 0;
  }
  for (const pid of pids) {
    if (Number(pid) === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue;
    }
    if (!environ.split("\0").includes(needle)) continue;
    try {
      process.kill(Number(pid), "SIGKILL");
      n++;
    } catch {
      // already gone
    }
  }
  return n;
}
