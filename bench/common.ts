/**
 * Shared pieces of the benchmarks: child processes under the runtime running the bench,
 * the mock server as a child, medians, and the eval flags the figures are taken with.
 *
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { join } from "node:path";
import { execPath } from "../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";

/** The bench folder. */
export const BENCH = import.meta.dirname!;

/** argv that runs a TypeScript file of this repo under the current runtime. */
export function scriptArgv(script: string, args: string[] = []): string[] {
  return runtimeName() === "deno"
    ? [execPath(), "run", "-A", script, ...args]
    : [execPath(), script, ...args];
}

/** A child process running the mock server; resolves with its URL. */
export async function spawnMock(
  latencyMs = 0,
): Promise<{ url: string; stop(): void }> {
  const [cmd, ...rest] = scriptArgv(join(BENCH, "mock_server.ts"), [
    "--latency-ms",
    String(latencyMs),
  ]);
  const child = spawn(cmd, rest, { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      text += d;
      const line = text.split("\n")[0];
      if (text.includes("\n")) resolve(line.trim());
    });
    child.on("exit", (code) => reject(new Error(`mock server exited (${code})`)));
  });
  return { url, stop: () => child.kill("SIGKILL") };
}

/** Runs a child to completion and returns its stdout (throws on a non-zero exit). */
export function runChild(argv: string[], env: Record<string, string> = {}): Promise<string> {
  const [cmd, ...rest] = argv;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, rest, {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env },
    });
    let out = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d));
    child.on("error", reject);
    child.on(
      "close",
      (code) => code === 0 ? resolve(out) : reject(new Error(`${argv.join(" ")} exited ${code}`)),
    );
  });
}

/** The median of some numbers. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * `vf eval` flags of the benchmark run: `n` single-turn addition questions through the
 * null harness, scored by the taskset's reward and the match judge, `c` in flight.
 */
export function evalArgs(url: string, n: number, c: number, out: string): string[] {
  return [
    "addition",
    "-n",
    String(n),
    "-c",
    String(c),
    "-m",
    "bench-model",
    "--env.agent.harness.id",
    "null",
    "--env.taskset.task.judges",
    '[{"id":"match"}]',
    "--client.base-url",
    url,
    "--client.api-key-var",
    "VF_BENCH_KEY",
    "--display",
    "none",
    "-o",
    out,
  ];
}
