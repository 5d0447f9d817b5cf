/**
 * Two versions of the engine side by side, in process: this checkout and `--before
 * <checkout>` (another checkout of this repository, its `node_modules` installed) each run
 * `n` single-turn rollouts after `warmup` more (addition taskset, null harness, match
 * judge, `c` in flight) against one loopback mock, each run in a fresh process
 * (bench/in_process_child.ts), on Bun and on Deno, over `rounds` rounds that alternate
 * which version goes first. Prints, per runtime, the median CPU time per rollout of each
 * (the process's, and its JavaScript thread's on Linux), their ratio, the median of each
 * round's own ratio (the two runs of a round ran back to back, so the load's drift over the
 * rounds cancels out of it), every round's figure and the load averages: the way to tell a change of a few percent from the
 * machine's noise, which moves identical runs by as much between rounds. `--credentials K`
 * and `--answer-kib P` run both in a user-like environment (bench/user_env.ts).
 *
 * `deno run -A bench/compare_in_process.ts --before <checkout> [--n 5000] [--warmup 2000]
 * [--c 50] [--rounds 8] [--credentials 0] [--answer-kib 0]`
 *
 * @module
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import process from "node:process";
import {
  BENCH,
  denoTaskV8Flags,
  lastJsonLine,
  loadAverages,
  median,
  pairedRatios,
  ROOT,
  runChild,
  RUNTIMES,
  spawnMock,
} from "./common.ts";
import { flag, textFlag } from "./throughput.ts";
import {
  credentialVariables,
  describeEnvironment,
  environmentFlags,
  type UserEnvironment,
} from "./user_env.ts";

/** What one child measured. */
interface ChildRun {
  cpuUs: number;
  mainUs: number | null;
  wallMs: number;
}

/** Runs the child for the checkout at `root` under `runtime`; resolves with its figures. */
async function measure(
  runtime: "bun" | "deno",
  root: string,
  args: string[],
  env: Record<string, string>,
): Promise<ChildRun> {
  const child = join(BENCH, "in_process_child.ts");
  const argv = runtime === "deno"
    ? [
      RUNTIMES.deno,
      "run",
      "-A",
      ...denoTaskV8Flags(root), // as that checkout's vf deno task runs
      "--config",
      join(root, "deno.json"),
      child,
      root,
      ...args,
    ]
    : [RUNTIMES.bun, child, root, ...args];
  const out = await runChild(argv, env, root);
  return lastJsonLine<ChildRun>(out);
}

/** The figures of one runtime: medians and every round of both versions. */
function report(runtime: string, before: ChildRun[], now: ChildRun[]): void {
  const cpu = (runs: ChildRun[]) => median(runs.map((r) => r.cpuUs));
  const main = (runs: ChildRun[]) =>
    runs.every((r) => r.mainUs !== null) ? median(runs.map((r) => r.mainUs!)) : null;
  const [cb, cn, mb, mn] = [cpu(before), cpu(now), main(before), main(now)];
  const rounds = (runs: ChildRun[]) => runs.map((r) => r.cpuUs.toFixed(0)).join(", ");
  const paired = pairedRatios(now.map((r) => r.cpuUs), before.map((r) => r.cpuUs)).median;
  console.log(
    `  ${runtime}: CPU per rollout before ${cb.toFixed(0)} µs, now ${cn.toFixed(0)} µs = ` +
      `${(cn / cb).toFixed(3)}x (median of the rounds' own ratios ${paired.toFixed(3)}x)` +
      (mb !== null && mn !== null
        ? `; JavaScript thread ${mb.toFixed(0)} → ${mn.toFixed(0)} µs = ${(mn / mb).toFixed(3)}x`
        : ""),
  );
  console.log(`    rounds before: ${rounds(before)}; now: ${rounds(now)}`);
}

/** Measures both versions, interleaved, and prints the comparison. */
export async function compareInProcess(options: {
  before: string;
  n: number;
  warmup: number;
  c: number;
  rounds: number;
  environment: UserEnvironment;
}): Promise<void> {
  const before = resolve(options.before);
  if (!existsSync(join(before, "lib", "run", "run_eval.ts"))) {
    console.error(`--before ${options.before}: not a checkout of this repository`);
    process.exit(2);
  }
  const { credentials, answerPadBytes } = options.environment;
  const mock = await spawnMock(0, { runtime: "bun", answerPadBytes });
  // the same values for both versions: a secret's length is part of what redaction costs
  const env = credentialVariables(credentials);
  const seen = new Map<string, ChildRun[]>();
  try {
    const args = [mock.url, String(options.n), String(options.warmup), String(options.c)];
    if (answerPadBytes > 0) args.push("long");
    for (let round = 0; round < options.rounds; round++) {
      for (const runtime of ["bun", "deno"] as const) {
        const versions = [{ root: before, label: "before" }, { root: ROOT, label: "now" }];
        for (const { root, label } of round % 2 === 0 ? versions : versions.reverse()) {
          const key = `${runtime} ${label}`;
          const list = seen.get(key) ?? [];
          list.push(await measure(runtime, root, args, env));
          seen.set(key, list);
        }
      }
      console.log(`  round ${round + 1} of ${options.rounds} done, ${loadAverages()}`);
    }
  } finally {
    mock.stop();
  }
  console.log(
    `in process, before = ${before}, now = this checkout: N=${options.n} after ${options.warmup} ` +
      `warm-up rollouts, C=${options.c}, ${options.rounds} rounds, ` +
      `${describeEnvironment(options.environment)} (${loadAverages()})`,
  );
  for (const runtime of ["bun", "deno"]) {
    report(runtime, seen.get(`${runtime} before`)!, seen.get(`${runtime} now`)!);
  }
}

if (import.meta.main) {
  const before = textFlag("before");
  if (before === undefined) {
    console.error("usage: compare_in_process.ts --before <checkout> [--n 5000] [--rounds 8]");
    process.exit(2);
  }
  await compareInProcess({
    before,
    n: flag("n", 5000),
    warmup: flag("warmup", 2000),
    c: flag("c", 50),
    rounds: flag("rounds", 8),
    environment: environmentFlags(),
  });
  process.exit(0);
}
