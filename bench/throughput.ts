/**
 * Throughput: `n` single-turn rollouts (addition taskset, null harness, match judge) at
 * concurrency `c` against the loopback mock server, compared in the same process with
 * the floor — a plain `fetch` loop sending the same requests to the same mock at the same
 * concurrency. Prints both walls (median of the repeats) and their ratio, and the wall of
 * the same run answered by the in-process oracle (`-m oracle`: no socket at all), which is
 * what the engine costs per rollout apart from the model call.
 *
 * `deno run -A bench/throughput.ts [--n 2000] [--c 50] [--latency-ms 0] [--repeats 3]`
 *
 * @module
 */
import "./_builtins.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { resolveRunDir } from "../lib/run/naming.ts";
import { runEval } from "../lib/run/run_eval.ts";
import { ADDITION_SYSTEM_PROMPT, additionTasks } from "../plugins/tasksets/addition/mod.ts";
import { askMock } from "./ask_mock.ts";
import { evalArgs, median, spawnMock } from "./common.ts";

/** Reads `--name value` from argv. */
export function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

/** Reads `--name text` from argv; undefined when absent. */
export function textFlag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

/** The floor: the harness's requests, sent straight to the mock with `c` in flight. */
async function plainFetch(url: string, n: number, c: number): Promise<number> {
  const tasks = additionTasks(0, 3);
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const task = tasks.next().value!;
      await askMock(url, ADDITION_SYSTEM_PROMPT, task.prompt, task.answer);
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
  return performance.now() - started;
}

/**
 * One whole run (`vf eval`, in-process) against the mock, or the oracle with `oracle`;
 * returns its wall time.
 */
async function evalRun(url: string, n: number, c: number, oracle = false): Promise<number> {
  const out = mkdtempSync(join(tmpdir(), "vf-bench-"));
  try {
    const args = evalArgs(url, n, c, out);
    if (oracle) args[args.indexOf("-m") + 1] = "oracle";
    const loaded = await loadEvalConfig(args, { cwd: out });
    const runDir = resolveRunDir(loaded.config, out);
    const started = performance.now();
    const { summary } = await runEval(loaded, { runDir, cwd: out });
    const wall = performance.now() - started;
    if (summary.counts.episodes !== n || summary.reward.mean !== 2) {
      throw new Error(
        `bad run: ${summary.counts.episodes} episodes, reward ${summary.reward.mean}`,
      );
    }
    return wall;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** Measures and returns `{floorMs, runMs, ratio, oracleMs}`. */
export async function throughput(
  options: { n: number; c: number; latencyMs: number; repeats: number },
): Promise<{ floorMs: number; runMs: number; ratio: number; oracleMs: number }> {
  process.env.VF_BENCH_KEY = "sk-bench";
  const mock = await spawnMock(options.latencyMs);
  try {
    // warm-up: JIT, connection pools, module loading
    await plainFetch(mock.url, 200, options.c);
    await evalRun(mock.url, 200, options.c);
    await evalRun(mock.url, 200, options.c, true);
    const floors: number[] = [];
    const runs: number[] = [];
    const oracles: number[] = [];
    for (let i = 0; i < options.repeats; i++) {
      floors.push(await plainFetch(mock.url, options.n, options.c));
      runs.push(await evalRun(mock.url, options.n, options.c));
      oracles.push(await evalRun(mock.url, options.n, options.c, true));
    }
    const floorMs = median(floors);
    const runMs = median(runs);
    return { floorMs, runMs, ratio: runMs / floorMs, oracleMs: median(oracles) };
  } finally {
    mock.stop();
  }
}

if (import.meta.main) {
  const o = {
    n: flag("n", 2000),
    c: flag("c", 50),
    latencyMs: flag("latency-ms", 0),
    repeats: flag("repeats", 3),
  };
  const r = await throughput(o);
  console.log(
    `throughput  N=${o.n} C=${o.c} latency=${o.latencyMs}ms: run ${r.runMs.toFixed(0)} ms, ` +
      `plain-fetch floor ${r.floorMs.toFixed(0)} ms, ratio ${r.ratio.toFixed(2)}x ` +
      `(${(o.n / (r.runMs / 1000)).toFixed(0)} rollouts/s); the engine alone (oracle, no ` +
      `socket) ${r.oracleMs.toFixed(0)} ms = ${(r.oracleMs / r.floorMs).toFixed(2)}x the floor`,
  );
  process.exit(0);
}
