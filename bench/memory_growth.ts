/**
 * Where memory goes as a run gets longer: in-process runs (bench/memory_child.ts) of
 * `small` and `large` rollouts under each engine setting tried, each in a fresh process.
 * Prints peak RSS, peak JS heap and (where code may collect) the heap still live after a
 * full collection at the end. Equal live heaps with a growing peak mean nothing is retained
 * per rollout and the growth is the collector's choice of heap size, which engine
 * settings decide; a growing live heap is a leak. With load averages.
 *
 * `deno run -A bench/memory_growth.ts [--small 2000] [--large 20000] [--c 50] [--only "a|b"]`
 * (`--only`: the settings named, `|`-separated)
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import {
  BENCH,
  denoTaskV8Flags,
  lastJsonLine,
  loadAverages,
  runChild,
  RUNTIMES,
  spawnMock,
} from "./common.ts";
import { flag } from "./throughput.ts";

/**
 * Engine settings tried. Deno lets code collect only with `--expose-gc` (as the `vf` deno
 * tasks run it), so the first two differ in the run's periodic collections
 * (lib/run/heap_trim.ts) and show what they do; Bun always lets code collect.
 */
/** What bench/memory_child.ts prints. */
interface ChildFigures {
  episodes: number;
  wallMs: number;
  cpuMs: number;
  peakRssMB: number;
  peakHeapMB: number;
  heapAfterGcMB: number | null;
}

const SETTINGS: { name: string; argv: string[]; env?: Record<string, string> }[] = [
  { name: "deno without --expose-gc", argv: [RUNTIMES.deno, "run", "-A"] },
  { name: "deno --expose-gc", argv: [RUNTIMES.deno, "run", "-A", "--v8-flags=--expose-gc"] },
  {
    name: "deno as the vf task (young generation capped at 16 MB)",
    argv: [RUNTIMES.deno, "run", "-A", ...denoTaskV8Flags()],
  },
  {
    name: "deno --max-semi-space-size=8",
    argv: [RUNTIMES.deno, "run", "-A", "--v8-flags=--expose-gc,--max-semi-space-size=8"],
  },
  {
    name: "deno --optimize-for-size",
    argv: [RUNTIMES.deno, "run", "-A", "--v8-flags=--expose-gc,--optimize-for-size"],
  },
  {
    name: "deno --expose-gc MALLOC_ARENA_MAX=2",
    argv: [RUNTIMES.deno, "run", "-A", "--v8-flags=--expose-gc"],
    env: { MALLOC_ARENA_MAX: "2" },
  },
  { name: "bun", argv: [RUNTIMES.bun] },
  { name: "bun --smol", argv: [RUNTIMES.bun, "--smol"] },
];

if (import.meta.main) {
  const small = flag("small", 2000);
  const large = flag("large", 20_000);
  const c = flag("c", 50);
  const only = process.argv.includes("--only")
    ? process.argv[process.argv.indexOf("--only") + 1]
    : null;
  const mock = await spawnMock(0, { runtime: "bun" });
  try {
    const picked = only?.split("|");
    for (const s of SETTINGS.filter((s) => !picked || picked.includes(s.name))) {
      const figures = [];
      for (const n of [small, large]) {
        const before = loadAverages();
        const out = await runChild(
          [...s.argv, join(BENCH, "memory_child.ts"), mock.url, String(n), String(c)],
          s.env,
        );
        const r = lastJsonLine<ChildFigures>(out);
        if (r.episodes !== n) throw new Error(`${s.name}: ${r.episodes} of ${n} episodes`);
        figures.push(r);
        console.log(
          `  ${s.name} N=${n}: peak RSS ${r.peakRssMB.toFixed(0)} MB, peak heap ${
            r.peakHeapMB.toFixed(0)
          } MB, live heap after GC ${r.heapAfterGcMB?.toFixed(1) ?? "?"} MB, wall ${
            (r.wallMs / 1000).toFixed(1)
          } s, CPU ${(r.cpuMs / 1000).toFixed(1)} s (${before} at start, ${loadAverages()} at end)`,
        );
      }
      console.log(
        `${s.name}: peak RSS ratio N=${large}/N=${small} ${
          (figures[1]!.peakRssMB / figures[0]!.peakRssMB).toFixed(2)
        }x`,
      );
    }
  } finally {
    mock.stop();
  }
  process.exit(0);
}
