/**
 * Memory: peak RSS of whole `vf eval` processes of `small` and of `large` rollouts
 * (addition, null harness, match judge, `c` in flight, instant mock), as users run them
 * with default settings: the Bun binary (flags of the `compile:bun` task) and `vf` under
 * the `vf` deno task's flags, `repeats` times each, the sizes alternating. Prints every
 * run, then per runtime the median peak of each size and their ratio, with load averages:
 * one run per size moved the ratio by 0.2 between identical runs, as a 2,000-rollout run
 * can end on the engine's ramp. A runner whose memory does not grow with run length keeps
 * the ratio near 1.
 *
 * `deno run -A bench/memory.ts [--small 2000] [--large 50000] [--c 50] [--repeats 3]`
 * (bench/memory_child.ts runs the same in-process, for heap experiments with engine flags.)
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  buildBunBinary,
  denoTaskArgv,
  evalArgs,
  loadAverages,
  measureChild,
  median,
  spawnMock,
} from "./common.ts";
import { flag } from "./throughput.ts";
import { checkVfRun } from "./whole_process.ts";

/** Peak RSS of both run sizes (medians of the repeats) and their ratio, per runtime. */
export interface MemoryResult {
  small: number;
  large: number;
  ratio: number;
}

/** Measures and prints; returns `{bun, deno}`. */
export async function memory(
  options: { small: number; large: number; c: number; repeats?: number },
): Promise<Record<string, MemoryResult>> {
  const work = mkdtempSync(join(tmpdir(), "vf-bench-mem-"));
  const bin = buildBunBinary(work);
  const mock = await spawnMock(0, { runtime: "bun" });
  const vf: Record<"bun" | "deno", string[]> = { bun: [bin], deno: denoTaskArgv() };
  const env = { VF_BENCH_KEY: "sk-bench", NO_COLOR: "1" };
  const out: Record<string, MemoryResult> = {};
  try {
    for (const rt of ["bun", "deno"] as const) {
      const peak = async (n: number) => {
        const dir = mkdtempSync(join(work, "out-"));
        try {
          const before = loadAverages();
          const f = await measureChild([
            ...vf[rt],
            "eval",
            ...evalArgs(mock.url, n, options.c, dir),
          ], {
            env,
            cwd: dir,
          });
          checkVfRun(dir, n);
          console.log(
            `  ${rt} N=${n}: peak RSS ${f.peakRssMB.toFixed(0)} MB, wall ${
              (f.wallMs / 1000).toFixed(1)
            } s, CPU ${
              (f.cpuMs / 1000).toFixed(1)
            } s (${before} at start, ${loadAverages()} at end)`,
          );
          return f.peakRssMB;
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      };
      const smalls: number[] = [];
      const larges: number[] = [];
      for (let i = 0; i < (options.repeats ?? 3); i++) {
        smalls.push(await peak(options.small));
        larges.push(await peak(options.large));
      }
      const [small, large] = [median(smalls), median(larges)];
      out[rt] = { small, large, ratio: large / small };
    }
  } finally {
    mock.stop();
    rmSync(work, { recursive: true, force: true });
  }
  console.log(
    `memory      whole process, C=${options.c}, default settings, medians of ${
      options.repeats ?? 3
    } runs each (${loadAverages()})`,
  );
  for (const [rt, r] of Object.entries(out)) {
    console.log(
      `  ${rt === "bun" ? "vf Bun binary" : "vf, deno task"}: peak RSS N=${options.small} ` +
        `${r.small.toFixed(0)} MB, N=${options.large} ${r.large.toFixed(0)} MB, ratio ` +
        `${r.ratio.toFixed(2)}x (target ≤ 1.25x)`,
    );
  }
  return out;
}

if (import.meta.main) {
  await memory({
    small: flag("small", 2000),
    large: flag("large", 50_000),
    c: flag("c", 50),
    repeats: flag("repeats", 3),
  });
  process.exit(0);
}
