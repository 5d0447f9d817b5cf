/**
 * One benchmark run in its own process, for the memory benchmarks: `vf eval` of `n`
 * addition rollouts (null harness, match judge, `c` in flight) against the mock at `url`,
 * in-process. Samples the JS heap every 100 ms, and, when code may collect (Bun; Deno with
 * `--v8-flags=--expose-gc`), collects at the end so that the heap still live after the run
 * shows (what a leak would grow).
 * Prints `{n, wallMs, cpuMs, peakRssMB, peakHeapMB, heapAfterGcMB, episodes}` as JSON.
 *
 * `deno run -A bench/memory_child.ts <url> <n> [c]`
 *
 * @module
 */
import "./_builtins.ts";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { resolveRunDir } from "../lib/run/naming.ts";
import { runEval } from "../lib/run/run_eval.ts";
import { collectGarbage } from "../kit/_runtime/gc.ts";
import { evalArgs } from "./common.ts";

/** Peak resident set size of this process in MB: VmHWM on Linux, else maxRSS. */
export function peakRssMB(): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]) / 1024;
  } catch {
    // not Linux
  }
  return process.resourceUsage().maxRSS / 1024;
}

if (import.meta.main) {
  const [url, n, c] = process.argv.slice(-3).length === 3 && !process.argv.at(-3)!.endsWith(".ts")
    ? process.argv.slice(-3)
    : [...process.argv.slice(-2), "50"];
  if (url === undefined) throw new Error("usage: memory_child.ts <url> <n> [<c>]");
  process.env.VF_BENCH_KEY = "sk-bench";
  const out = mkdtempSync(join(tmpdir(), "vf-bench-mem-"));
  const mb = (bytes: number) => bytes / (1024 * 1024);
  let peakHeap = 0;
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 100);
  try {
    const loaded = await loadEvalConfig(evalArgs(url, Number(n), Number(c), out), { cwd: out });
    const runDir = resolveRunDir(loaded.config, out);
    const cpu = process.cpuUsage();
    const started = performance.now();
    const { summary } = await runEval(loaded, { runDir, cwd: out });
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(cpu);
    clearInterval(sampler);
    const gc = collectGarbage() ? collectGarbage : null;
    process.stdout.write(
      JSON.stringify({
        n: Number(n),
        wallMs,
        cpuMs: (used.user + used.system) / 1000,
        peakRssMB: peakRssMB(),
        peakHeapMB: mb(peakHeap),
        heapAfterGcMB: gc ? mb(process.memoryUsage().heapUsed) : null,
        episodes: summary.counts.episodes,
      }) + "\n",
    );
  } finally {
    clearInterval(sampler);
    rmSync(out, { recursive: true, force: true });
  }
  process.exit(0);
}
