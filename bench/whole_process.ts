/**
 * Whole processes side by side against one shared loopback mock: `n` single-turn addition
 * tasks, `c` in flight, null harness, match judge. Contestants, interleaved over `rounds`
 * (each round starts one contestant later):
 *
 * - the plain-`fetch` floor (bench/fetch_floor.ts) on Bun and on Deno;
 * - `vf` as a Bun binary (`bun build --compile`, built once before the rounds);
 * - `vf` under `deno run`, with the flags of the `vf` deno task (deno.json);
 * - promptfoo, when `node_modules/.bin/promptfoo` exists (same prompts, an `equals`
 *   assertion); skipped with a message otherwise.
 *
 * With `--before <checkout>` (another checkout of this repository, its `node_modules`
 * installed), its Bun binary and its `vf` under deno run join the rounds, so that two
 * versions are compared in one run, under the same load; each runtime's line then ends with
 * the median and range of each round's own ratio of the two (bench/common.ts
 * `pairedRatios`): a range across 1 is the machine's noise, not the code's.
 *
 * With `--halves`, one more contestant: two Bun binaries side by side, each running half
 * the tasks with half the concurrency (the wall of the pair): what a second process would
 * buy a run on this machine, where the mock holds a core of its own too.
 *
 * Prints wall (median and range), peak RSS (highest), CPU, and the ratio of the median
 * wall to the median wall of the same runtime's floor, with the load averages of every
 * round. Figures only: nothing here is a test.
 *
 * `deno run -A bench/whole_process.ts [--n 2000] [--c 50] [--rounds 3] [--halves]`
 *
 * @module
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  BENCH,
  buildBunBinary,
  canMeasureChildren,
  type ChildFigures,
  denoTaskArgv,
  evalArgs,
  loadAverages,
  measureChild,
  median,
  pairedRatios,
  ROOT,
  runtimeArgv,
  spawnMock,
} from "./common.ts";
import { flag, textFlag } from "./throughput.ts";
import { seededRandom } from "../kit/taskset_view.ts";
import { shellJoin } from "../kit/remote/process_group.ts";

/** One contestant: how to run it for a given mock URL and output directory. */
interface Contestant {
  name: string;
  /** The floor it is compared with (same runtime), or null. */
  floor: string | null;
  argv(url: string, out: string): string[];
  /** Checks what the run left in `out`; throws when it did not do the work. */
  check(out: string, figures: ChildFigures): void;
}

/** Throws unless the run in `out` scored all `n` episodes right (reward 2: correct + match). */
export function checkVfRun(out: string, n: number): void {
  const [run] = readdirSync(out);
  if (run === undefined) throw new Error(`vf wrote no run directory in ${out}`);
  const summary = JSON.parse(readFileSync(join(out, run, "summary.json"), "utf8"));
  if (summary.counts.episodes !== n || summary.reward.mean !== 2) {
    throw new Error(`bad run: ${summary.counts.episodes} episodes, reward ${summary.reward.mean}`);
  }
}

/** A promptfoo config asking the same questions with an `equals` assertion. */
function writePromptfooConfig(dir: string, url: string, n: number): string {
  const path = join(dir, "promptfooconfig.json");
  // the same seeded questions as bench/fetch_floor.ts
  const tests: unknown[] = [];
  const rand = seededRandom(0);
  for (let i = 0; i < n; i++) {
    const a = 100 + Math.floor(rand() * 900);
    const b = 100 + Math.floor(rand() * 900);
    tests.push({
      vars: { q: `What is ${a} + ${b}?` },
      assert: [{ type: "equals", value: String(a + b) }],
    });
  }
  writeFileSync(
    path,
    JSON.stringify({
      prompts: [JSON.stringify([
        { role: "system", content: "Answer with the final number only." },
        { role: "user", content: "{{q}}" },
      ])],
      providers: [{
        id: "openai:chat:bench-model",
        config: { apiBaseUrl: url, apiKeyEnvar: "VF_BENCH_KEY" },
      }],
      tests,
    }),
  );
  return path;
}

/** Runs the rounds and prints the table. */
export async function wholeProcess(
  options: {
    n: number;
    c: number;
    rounds: number;
    before?: string | undefined;
    halves?: boolean;
  },
): Promise<Map<string, { wallMs: number; peakRssMB: number; ratio: number | null }>> {
  if (!canMeasureChildren()) {
    throw new Error("/usr/bin/time (GNU time) is needed for the peak RSS of a child process");
  }
  const { n, c } = options;
  const env = { VF_BENCH_KEY: "sk-bench", NO_COLOR: "1" };
  const work = mkdtempSync(join(tmpdir(), "vf-bench-whole-"));
  const bin = buildBunBinary(work);
  const beforeBin = options.before === undefined
    ? null
    : buildBunBinary(mkdtempSync(join(work, "before-")), options.before);
  const floorScript = join(BENCH, "fetch_floor.ts");
  const floorCheck = (_out: string, f: ChildFigures) => {
    if (JSON.parse(f.stdout.trim()).n !== n) throw new Error("the floor did not finish");
  };
  const contestants: Contestant[] = [
    {
      name: "plain fetch, Bun",
      floor: null,
      argv: (url) => runtimeArgv("bun", floorScript, [url, String(n), String(c)]),
      check: floorCheck,
    },
    {
      name: "vf Bun binary",
      floor: "plain fetch, Bun",
      argv: (url, out) => [bin, "eval", ...evalArgs(url, n, c, out)],
      check: (out) => checkVfRun(out, n),
    },
    {
      name: "plain fetch, Deno",
      floor: null,
      argv: (url) => runtimeArgv("deno", floorScript, [url, String(n), String(c)]),
      check: floorCheck,
    },
    {
      name: "vf, deno run",
      floor: "plain fetch, Deno",
      argv: (url, out) => [...denoTaskArgv(), "eval", ...evalArgs(url, n, c, out)],
      check: (out) => checkVfRun(out, n),
    },
  ];
  if (options.before !== undefined && beforeBin !== null) {
    const before = options.before;
    contestants.push(
      {
        name: "vf Bun binary, before",
        floor: "plain fetch, Bun",
        argv: (url, out) => [beforeBin, "eval", ...evalArgs(url, n, c, out)],
        check: (out) => checkVfRun(out, n),
      },
      {
        name: "vf, deno run, before",
        floor: "plain fetch, Deno",
        argv: (url, out) => [...denoTaskArgv("vf", before), "eval", ...evalArgs(url, n, c, out)],
        check: (out) => checkVfRun(out, n),
      },
    );
  }
  if (options.halves) {
    const sizes = { a: Math.floor(n / 2), b: n - Math.floor(n / 2) };
    const half = (url: string, out: string, part: "a" | "b") =>
      shellJoin([bin, "eval", ...evalArgs(url, sizes[part], Math.ceil(c / 2), join(out, part))]);
    contestants.push({
      name: "vf Bun binary, halves",
      floor: "plain fetch, Bun",
      // the pair's wall; fails when either half does
      argv: (url, out) => [
        "bash",
        "-c",
        `${half(url, out, "a")} >/dev/null & ${half(url, out, "b")} >/dev/null; ` +
        `b=$?; wait $!; exit $(( $? | b ))`,
      ],
      check: (out) => {
        checkVfRun(join(out, "a"), sizes.a);
        checkVfRun(join(out, "b"), sizes.b);
      },
    });
  }
  const promptfoo = join(ROOT, "node_modules", ".bin", "promptfoo");
  if (existsSync(promptfoo)) {
    contestants.push({
      name: "promptfoo",
      floor: null,
      argv: (url, out) => [
        promptfoo,
        "eval",
        "-c",
        writePromptfooConfig(out, url, n),
        "-j",
        String(c),
        "--no-cache",
        "--no-table",
        "--no-write",
        "--no-progress-bar",
      ],
      check: () => {},
    });
  } else {
    console.log("promptfoo: not installed (node_modules/.bin/promptfoo), skipped");
  }

  const mock = await spawnMock(0, { runtime: "bun" });
  const seen = new Map<string, ChildFigures[]>(contestants.map((k) => [k.name, []]));
  const runOnce = async (k: Contestant, count: boolean): Promise<void> => {
    const out = mkdtempSync(join(work, "out-"));
    try {
      const figures = await measureChild(k.argv(mock.url, out), { env, cwd: out });
      k.check(out, figures);
      if (count) seen.get(k.name)!.push(figures);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  };
  try {
    // warm-up: page cache, compile caches (deno), the mock's JIT
    for (const k of contestants) await runOnce(k, false);
    for (let round = 0; round < options.rounds; round++) {
      const before = loadAverages();
      const k = round % contestants.length; // each round starts one contestant later
      for (const contestant of [...contestants.slice(k), ...contestants.slice(0, k)]) {
        await runOnce(contestant, true);
      }
      console.log(`  round ${round + 1}: ${before} at start, ${loadAverages()} at end`);
    }
  } finally {
    mock.stop();
    rmSync(work, { recursive: true, force: true });
  }

  const result = new Map<string, { wallMs: number; peakRssMB: number; ratio: number | null }>();
  console.log(
    `whole process  N=${n} C=${c}, ${options.rounds} interleaved rounds, one Bun mock ` +
      `(${loadAverages()})`,
  );
  for (const k of contestants) {
    const runs = seen.get(k.name)!;
    const walls = runs.map((r) => r.wallMs);
    const wallMs = median(walls);
    const peakRssMB = Math.max(...runs.map((r) => r.peakRssMB));
    const floorRuns = k.floor === null ? null : seen.get(k.floor)!;
    const floor = floorRuns === null ? null : median(floorRuns.map((r) => r.wallMs));
    const ratio = floor === null ? null : wallMs / floor;
    const cpuMs = median(runs.map((r) => r.cpuMs));
    const cpuRatio = floorRuns === null ? null : cpuMs / median(floorRuns.map((r) => r.cpuMs));
    result.set(k.name, { wallMs, peakRssMB, ratio });
    console.log(
      `  ${k.name.padEnd(22)} wall ${(wallMs / 1000).toFixed(2)} s ` +
        `(${(Math.min(...walls) / 1000).toFixed(2)}–${(Math.max(...walls) / 1000).toFixed(2)}), ` +
        `peak RSS ${peakRssMB.toFixed(0)} MB, CPU ${(cpuMs / 1000).toFixed(2)} s` +
        (ratio === null
          ? ""
          : `; ${ratio.toFixed(2)}x its floor's wall (target ≤ 1.5x), ${
            cpuRatio!.toFixed(1)
          }x its CPU`),
    );
  }
  for (const runtime of ["vf Bun binary", "vf, deno run"]) {
    const now = seen.get(runtime)!;
    const before = seen.get(`${runtime}, before`);
    if (before === undefined) continue;
    const line = (figure: "wallMs" | "cpuMs") => {
      const r = pairedRatios(now.map((f) => f[figure]), before.map((f) => f[figure]));
      return `${r.median.toFixed(2)}x (rounds ${r.min.toFixed(2)}–${r.max.toFixed(2)})`;
    };
    console.log(
      `  ${runtime}, now / before: wall ${line("wallMs")}, CPU ${line("cpuMs")}, ` +
        `each round's own ratio`,
    );
  }
  return result;
}

if (import.meta.main) {
  await wholeProcess({
    n: flag("n", 2000),
    c: flag("c", 50),
    rounds: flag("rounds", 3),
    before: textFlag("before"),
    halves: process.argv.includes("--halves"),
  });
  process.exit(0);
}
