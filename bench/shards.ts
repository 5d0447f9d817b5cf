/**
 * Sharding on one machine: the same oracle run (`addition`, null harness, `n` tasks × `r`
 * rollouts) as one `vf eval` process and as `--shards` processes started together, each
 * `--shard i/<shards>` (wall: until the last one exits; CPU: the sum), then `vf merge` of
 * the shards (its wall per 100,000 lines). Rounds are interleaved. Prints the ratios of
 * the shards' wall and CPU to the single process's, measured in the same run. Figures only.
 *
 * `deno run -A bench/shards.ts [--n 5000] [--r 4] [--shards 4] [--c 64] [--rounds 2]`
 *
 * @module
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  canMeasureChildren,
  type ChildFigures,
  denoTaskArgv,
  loadAverages,
  measureChild,
  median,
} from "./common.ts";
import { flag } from "./throughput.ts";

const n = flag("n", 5000);
const r = flag("r", 4);
const shards = flag("shards", 4);
const c = flag("c", 64);
const rounds = flag("rounds", 2);

if (!canMeasureChildren()) {
  console.log("not run: /usr/bin/time (GNU time) is needed to measure child processes");
} else {
  const vf = denoTaskArgv("vf");
  const evalArgv = (name: string) => [
    ...vf,
    "eval",
    "addition",
    "-m",
    "oracle",
    "-n",
    String(n),
    "-r",
    String(r),
    "-c",
    String(c),
    "--env.agent.harness.id",
    "null",
    "--run.name",
    name,
    "--display",
    "none",
  ];
  const single: ChildFigures[] = [];
  const sharded: { wallMs: number; cpuMs: number }[] = [];
  const merges: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const cwd = mkdtempSync(join(tmpdir(), "vf-bench-shards-"));
    try {
      single.push(await measureChild(evalArgv("single"), { cwd }));
      const started = performance.now();
      const parts = await Promise.all(
        Array.from(
          { length: shards },
          (_, i) => measureChild([...evalArgv("sharded"), "--shard", `${i}/${shards}`], { cwd }),
        ),
      );
      sharded.push({
        wallMs: performance.now() - started,
        cpuMs: parts.reduce((s, p) => s + p.cpuMs, 0),
      });
      const merge = await measureChild([...vf, "merge", join(cwd, "outputs", "sharded")], { cwd });
      const summary = JSON.parse(
        readFileSync(join(cwd, "outputs", "sharded", "merged", "summary.json"), "utf8"),
      );
      if (summary.counts.episodes !== n * r) {
        throw new Error(`merge holds ${summary.counts.episodes} of ${n * r} episodes`);
      }
      merges.push(merge.wallMs);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
    console.log(`round ${round + 1}/${rounds} done (${loadAverages()})`);
  }
  const w1 = median(single.map((s) => s.wallMs));
  const c1 = median(single.map((s) => s.cpuMs));
  const wn = median(sharded.map((s) => s.wallMs));
  const cn = median(sharded.map((s) => s.cpuMs));
  const m = median(merges);
  console.log(`${n * r} rollouts (${n} tasks × ${r}), -c ${c} per process, ${rounds} rounds`);
  console.log(`1 process:   wall ${(w1 / 1000).toFixed(2)} s, CPU ${(c1 / 1000).toFixed(2)} s`);
  console.log(
    `${shards} shards:    wall ${(wn / 1000).toFixed(2)} s (×${(wn / w1).toFixed(2)}), ` +
      `CPU ${(cn / 1000).toFixed(2)} s (×${(cn / c1).toFixed(2)})`,
  );
  console.log(
    `vf merge:    ${(m / 1000).toFixed(2)} s for ${n * r} lines, ` +
      `${((m / (n * r)) * 100).toFixed(0)} s per 100,000 lines (process start included)`,
  );
}
