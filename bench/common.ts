/**
 * Shared pieces of the benchmarks: child processes under the runtime running the bench,
 * the mock server as a child, medians, and the eval flags the figures are taken with.
 *
 * @module
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import process from "node:process";
import { join } from "node:path";
import { execPath } from "../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";

/** The bench folder. */
export const BENCH = import.meta.dirname!;

/** argv that runs a TypeScript file of this repo under the current runtime. */
export function scriptArgv(script: string, args: string[] = []): [string, ...string[]] {
  return runtimeName() === "deno"
    ? [execPath(), "run", "-A", script, ...args]
    : [execPath(), script, ...args];
}

/** The repository root. */
export const ROOT = join(BENCH, "..");

/** The project's pinned runtimes (from `npm install`), else the one on PATH. */
export const RUNTIMES = {
  bun: existsSync(join(ROOT, "node_modules", "bun", "bin", "bun.exe"))
    ? join(ROOT, "node_modules", "bun", "bin", "bun.exe")
    : "bun",
  deno: existsSync(join(ROOT, "node_modules", "deno", "deno"))
    ? join(ROOT, "node_modules", "deno", "deno")
    : "deno",
} as const;

/** argv that runs a TypeScript file of this repo under the named runtime. */
export function runtimeArgv(
  runtime: "bun" | "deno",
  script: string,
  args: string[] = [],
): [string, ...string[]] {
  return runtime === "deno"
    ? [RUNTIMES.deno, "run", "-A", script, ...args]
    : [RUNTIMES.bun, script, ...args];
}

/** The deno.json tasks of the checkout at `root`. */
function denoTasks(root: string): Record<string, string> {
  return JSON.parse(readFileSync(join(root, "deno.json"), "utf8")).tasks;
}

/**
 * The argv of a deno task running `deno` (deno.json `tasks.vf` by default) with the pinned
 * Deno, in the checkout at `root` (default: this one).
 */
export function denoTaskArgv(task = "vf", root = ROOT): string[] {
  const text = denoTasks(root)[task];
  if (text === undefined) throw new Error(`deno.json has no task ${task}`);
  const words = text.split(/\s+/);
  const at = words.findIndex((w) => w.endsWith("deno.sh"));
  if (at < 0) throw new Error(`deno task ${task} does not run deno.sh`);
  // NAME=value words before the command are the task's environment: passed by env(1)
  const env = words.slice(0, at);
  const argv = [
    RUNTIMES.deno,
    ...words.slice(at + 1).map((w) => w.endsWith(".ts") ? join(root, w) : w),
  ];
  return env.length ? ["env", ...env, ...argv] : argv;
}

/**
 * The `--v8-flags=...` words of the `vf` deno task of the checkout at `root` (default: this
 * one): the engine settings a run under deno takes, for benchmarks that run engine code
 * their own way.
 */
export function denoTaskV8Flags(root = ROOT): string[] {
  return (denoTasks(root).vf ?? "").split(/\s+/).filter((w) => w.startsWith("--v8-flags="));
}

/**
 * Builds the `vf` Bun binary of the checkout at `root` (default: this one) into `dir` as it ships (scripts/build_binary.sh; a checkout
 * without that script: plain `bun build --compile`); returns its path.
 */
export function buildBunBinary(dir: string, root = ROOT): string {
  const bin = join(dir, "vf");
  const script = join(root, "scripts", "build_binary.sh");
  const [cmd, ...args] = existsSync(script)
    ? ["bash", script, bin]
    : [RUNTIMES.bun, "build", "--compile", "--outfile", bin, join(root, "cli.ts")];
  const build = spawnSync(cmd, args, { stdio: ["ignore", "ignore", "inherit"] });
  if (build.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed`);
  return bin;
}

/** The 1, 5 and 15 minute load averages, as printed next to every figure. */
export function loadAverages(): string {
  return `load ${loadavg().map((l) => l.toFixed(2)).join(" ")}`;
}

/**
 * A child process running the mock server; resolves with its URL. `runtime` picks the
 * runtime it runs on (default: the one running the bench).
 */
export async function spawnMock(
  latencyMs = 0,
  options: {
    runtime?: "bun" | "deno";
    streamChunks?: number;
    answerPadBytes?: number;
    splitAnswer?: boolean;
  } = {},
): Promise<{ url: string; stop(): void }> {
  const args = ["--latency-ms", String(latencyMs)];
  if (options.streamChunks !== undefined) {
    args.push("--stream-chunks", String(options.streamChunks));
  }
  if (options.answerPadBytes) args.push("--answer-pad-bytes", String(options.answerPadBytes));
  if (options.splitAnswer) args.push("--split-answer");
  const script = join(BENCH, "mock_server.ts");
  const [cmd, ...rest] = options.runtime
    ? runtimeArgv(options.runtime, script, args)
    : scriptArgv(script, args);
  const child = spawn(cmd, rest, { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise<string>((resolve, reject) => {
    let text = "";
    child.stdout!.setEncoding("utf8").on("data", (d: string) => {
      text += d;
      const line = text.split("\n")[0] ?? "";
      if (text.includes("\n")) resolve(line.trim());
    });
    child.on("exit", (code) => reject(new Error(`mock server exited (${code})`)));
  });
  return { url, stop: () => child.kill("SIGKILL") };
}

/** The JSON value a child printed on the last line of its stdout (`out`), as the bench children report. */
export function lastJsonLine<T = unknown>(out: string): T {
  return JSON.parse(out.trim().split("\n").at(-1) ?? "") as T;
}

/** Runs a child to completion and returns its stdout (throws on a non-zero exit). */
export function runChild(
  argv: string[],
  env: Record<string, string> = {},
  cwd?: string,
): Promise<string> {
  const [cmd, ...rest] = argv;
  if (cmd === undefined) return Promise.reject(new Error("runChild: empty argv"));
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, rest, {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env },
      cwd,
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

/** What {@link measureChild} saw of one whole process. */
export interface ChildFigures {
  /** Wall time from spawn to exit, ms. */
  wallMs: number;
  /** Peak resident set size, MB (the kernel's maxrss of the child). */
  peakRssMB: number;
  /** User + system CPU time, ms. */
  cpuMs: number;
  /** The child's stdout. */
  stdout: string;
}

/**
 * Runs `argv` to completion under `/usr/bin/time` (for the kernel's peak RSS and CPU time
 * of the child) and returns its figures; throws on a non-zero exit.
 */
export async function measureChild(
  argv: string[],
  options: { env?: Record<string, string>; cwd?: string } = {},
): Promise<ChildFigures> {
  const dir = mkdtempSync(join(tmpdir(), "vf-bench-time-"));
  const report = join(dir, "time.txt");
  try {
    const started = performance.now();
    const stdout = await runChild(
      ["/usr/bin/time", "-f", "%M %U %S", "-o", report, ...argv],
      options.env ?? {},
      options.cwd,
    );
    const wallMs = performance.now() - started;
    const [maxRssKb = NaN, user = NaN, sys = NaN] = (readFileSync(report, "utf8").trim()
      .split("\n").at(-1) ?? "").split(" ").map(Number);
    return { wallMs, peakRssMB: maxRssKb / 1024, cpuMs: (user + sys) * 1000, stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** True when `/usr/bin/time` (GNU time) is there to report a child's peak RSS. */
export function canMeasureChildren(): boolean {
  return existsSync("/usr/bin/time");
}

/** The median of some numbers. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  const mid = s[m] ?? NaN; // NaN for no values
  return s.length % 2 ? mid : ((s[m - 1] ?? NaN) + mid) / 2;
}

/** The ratios of runs made side by side (`now[i]` with `before[i]`): median and range. */
export interface PairedRatios {
  median: number;
  min: number;
  max: number;
}

/**
 * Each pair's own ratio `now[i] / before[i]`: two runs of one round ran back to back, so
 * their ratio cancels the load's drift over the rounds, and the range of the ratios shows
 * how far the machine moves one figure against the other (a range across 1 is noise).
 */
export function pairedRatios(now: number[], before: number[]): PairedRatios {
  if (now.length !== before.length || now.length === 0) {
    throw new Error(`pairedRatios: ${now.length} runs against ${before.length}`);
  }
  const ratios = now.map((value, i) => value / before[i]!);
  return { median: median(ratios), min: Math.min(...ratios), max: Math.max(...ratios) };
}

/**
 * `vf eval` flags of the benchmark run: `n` single-turn addition questions through the
 * null harness, scored by the taskset's reward and the match judge, `c` in flight. With
 * `longAnswers` (the mock's padded answers) the judge compares the answer's last line.
 */
export function evalArgs(
  url: string,
  n: number,
  c: number,
  out: string,
  longAnswers = false,
): string[] {
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
    longAnswers ? '[{"id":"match","extract":"last_line"}]' : '[{"id":"match"}]',
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
