/**
 * A minimal temp-dir {@link Runtime} for harness tests: commands run in `dir` with the
 * host environment, in their own process group (timeouts and aborts kill the group).
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, isAbsolute, join } from "node:path";
import process from "node:process";
import type { ProgramResult, RunOptions, Runtime } from "../kit/runtime/runtime.ts";
import { at } from "./_assert.ts";

/** A runtime whose workdir is `dir` (never removed). */
export function tempRuntime(dir: string): Runtime {
  const abs = (p: string) => (isAbsolute(p) ? p : join(dir, p));
  return {
    info: { type: "test", id: dir },
    stopped: false,
    isLocal: true,
    timeoutS: null,
    workdir: dir,
    async start() {},
    run(argv: string[], opts: RunOptions = {}): Promise<ProgramResult> {
      return new Promise((resolve) => {
        const child = spawn(at(argv, 0), argv.slice(1), {
          cwd: opts.cwd ? abs(opts.cwd) : dir,
          env: { ...process.env, ...opts.env },
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stdout = "";
        let stderr = "";
        let timedOut = false;
        child.stdout!.setEncoding("utf8").on("data", (c: string) => (stdout += c));
        child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr += c));
        const kill = () => {
          try {
            process.kill(-child.pid!, "SIGKILL");
          } catch { /* already gone */ }
        };
        const timer = opts.timeoutMs === undefined ? null : setTimeout(() => {
          timedOut = true;
          kill();
        }, opts.timeoutMs);
        if (opts.signal?.aborted) kill();
        opts.signal?.addEventListener("abort", kill, { once: true });
        child.on("error", (err) => resolve({ exitCode: 127, stdout, stderr: String(err) }));
        child.on("close", (code, sig) => {
          if (timer) clearTimeout(timer);
          opts.signal?.removeEventListener("abort", kill);
          const exitCode = timedOut ? 124 : code ?? 128 + (sig === "SIGKILL" ? 9 : 15);
          resolve({ exitCode, stdout, stderr });
        });
      });
    },
    async write(path: string, data: string | Uint8Array) {
      await mkdir(dirname(abs(path)), { recursive: true });
      await writeFile(abs(path), data);
    },
    async read(path: string) {
      return new Uint8Array(await readFile(abs(path)));
    },
    alive: () => Promise.resolve(true),
    async stop() {},
    async stopConfirmed() {},
  };
}
