/**
 * All benchmarks, one after the other, with the figures the README quotes:
 * throughput against the plain-fetch floor, peak RSS at two run sizes, binary startup.
 * `deno task bench` (or `bun bench/run_all.ts`). Figures only: nothing here is a test.
 *
 * @module
 */
import { cpus, loadavg } from "node:os";
import process from "node:process";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { memory } from "./memory.ts";
import { startup } from "./startup.ts";
import { flag, throughput } from "./throughput.ts";

const version = (globalThis as { Deno?: { version: { deno: string } } }).Deno?.version.deno ??
  process.versions.bun ?? process.version;
console.log(
  `verifiers-ts benchmarks on ${runtimeName()} ${version}, ${cpus().length} CPUs, ` +
    `load average ${loadavg().map((l) => l.toFixed(1)).join(" ")}`,
);
const t = { n: flag("n", 2000), c: flag("c", 50), latencyMs: flag("latency-ms", 0), repeats: 3 };
const tp = await throughput(t);
console.log(
  `throughput  N=${t.n} C=${t.c} latency=${t.latencyMs}ms: run ${tp.runMs.toFixed(0)} ms, ` +
    `plain-fetch floor ${tp.floorMs.toFixed(0)} ms, ratio ${tp.ratio.toFixed(2)}x (target ≤ 1.5x)`,
);
const m = await memory({ small: 2000, large: 50_000, c: 50 });
console.log(
  `memory      peak RSS N=2000: ${m.small.peakRssMB.toFixed(0)} MB, N=50000: ${
    m.large.peakRssMB.toFixed(0)
  } MB, ratio ${m.ratio.toFixed(2)}x (target ≤ 1.25x)`,
);
const s = startup(11);
console.log(
  `startup     ${s.binary}, median of 11: --version ${s.versionMs.toFixed(0)} ms, ` +
    `eval --dry-run ${s.dryRunMs.toFixed(0)} ms`,
);
process.exit(0);
