/**
 * One in-process run measured in a process of its own, for bench/compare_in_process.ts:
 * loads the engine of the checkout at `root` (so that another version of this repository
 * can be measured with this script), runs `warmup` rollouts, then `n` more against the
 * mock at `url`, and prints one JSON line: CPU per rollout of the measured run (process,
 * and the JavaScript thread where the system tells it) and its wall.
 *
 * `<runtime> bench/in_process_child.ts <root> <url> <n> <warmup> <c> [long]`: with `long`
 * the mock's answers end in their number (bench/mock_server.ts `answerPadBytes`).
 *
 * The checkout must have `lib/config/load_config.ts` (`loadEvalConfig`),
 * `lib/run/naming.ts` (`resolveRunDir`), `lib/run/run_eval.ts` (`runEval`) and
 * `bench/_builtins.ts`, as this one does.
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { evalArgs } from "./common.ts";
import { threadCpuBetween, threadTimes } from "./thread_cpu.ts";

const [root, url, nText, warmupText, cText, longText] = process.argv.slice(2);
if (root === undefined || url === undefined || cText === undefined) {
  console.error("usage: in_process_child.ts <root> <url> <n> <warmup> <c> [long]");
  process.exit(2);
}
const longAnswers = longText === "long";
const at = (path: string) => pathToFileURL(join(root, path)).href;
await import(at("bench/_builtins.ts"));
const { loadEvalConfig } = await import(at("lib/config/load_config.ts"));
const { resolveRunDir } = await import(at("lib/run/naming.ts"));
const { runEval } = await import(at("lib/run/run_eval.ts"));

/** Runs `n` rollouts; returns CPU µs per rollout (process and JavaScript thread) and wall ms. */
async function run(n: number, c: number) {
  const out = mkdtempSync(join(tmpdir(), "vf-bench-"));
  try {
    const loaded = await loadEvalConfig(evalArgs(url!, n, c, out, longAnswers), { cwd: out });
    const runDir = resolveRunDir(loaded.config, out);
    const threads = threadTimes();
    const cpu = process.cpuUsage();
    const wall = performance.now();
    const { summary } = await runEval(loaded, { runDir, cwd: out });
    const wallMs = performance.now() - wall;
    const used = process.cpuUsage(cpu);
    const split = threadCpuBetween(threads, threadTimes());
    if (summary.counts.episodes !== n || summary.reward.mean !== 2) {
      throw new Error(`bad run: ${summary.counts.episodes} episodes`);
    }
    const main = split?.get("main");
    return {
      cpuUs: (used.user + used.system) / n,
      mainUs: main === undefined ? null : main * 1000 / n,
      wallMs,
    };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

process.env.VF_BENCH_KEY = "sk-bench";
await run(Number(warmupText), Number(cText));
console.log(JSON.stringify(await run(Number(nText), Number(cText))));
process.exit(0);
