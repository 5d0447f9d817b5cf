/**
 * Memory: peak RSS of a whole run at N=2,000 and at N=50,000 rollouts (addition, null
 * harness, match judge, C=50, instant mock), each in a fresh child process, and their
 * ratio. A streaming runner keeps the ratio near 1.
 *
 * `deno run -A bench/memory.ts [--small 2000] [--large 50000] [--c 50]`
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import { BENCH, runChild, scriptArgv, spawnMock } from "./common.ts";
import { flag } from "./throughput.ts";

interface ChildResult {
  n: number;
  wallMs: number;
  peakRssMB: number;
  episodes: number;
}

async function measure(url: string, n: number, c: number): Promise<ChildResult> {
  const out = await runChild(
    scriptArgv(join(BENCH, "memory_child.ts"), [url, String(n), String(c)]),
  );
  const r = JSON.parse(out.trim().split("\n").at(-1)!) as ChildResult;
  if (r.episodes !== n) throw new Error(`the run of ${n} wrote ${r.episodes} episodes`);
  return r;
}

/** Measures and returns both peaks and their ratio. */
export async function memory(
  options: { small: number; large: number; c: number },
): Promise<{ small: ChildResult; large: ChildResult; ratio: number }> {
  const mock = await spawnMock(0);
  try {
    const small = await measure(mock.url, options.small, options.c);
    const large = await measure(mock.url, options.large, options.c);
    return { small, large, ratio: large.peakRssMB / small.peakRssMB };
  } finally {
    mock.stop();
  }
}

if (import.meta.main) {
  const o = { small: flag("small", 2000), large: flag("large", 50_000), c: flag("c", 50) };
  const r = await memory(o);
  console.log(
    `memory      peak RSS N=${o.small}: ${r.small.peakRssMB.toFixed(0)} MB, ` +
      `N=${o.large}: ${r.large.peakRssMB.toFixed(0)} MB, ratio ${r.ratio.toFixed(2)}x ` +
      `(C=${o.c}; runs took ${(r.small.wallMs / 1000).toFixed(1)} s and ${
        (r.large.wallMs / 1000).toFixed(1)
      } s)`,
  );
  process.exit(0);
}
