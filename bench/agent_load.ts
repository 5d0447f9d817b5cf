/**
 * An agent-like workload through the interception server, for each dialect: `rollouts`
 * rollouts of `turns` calls, each call sending the whole conversation again (growing to
 * ~200 KB, as Claude Code does), each answer streamed as `chunks` server-sent events,
 * `inFlight` rollouts at a time (bench/agent_workload.ts). The interceptor runs in a process
 * of its own (bench/agent_child.ts), the provider (bench/mock_server.ts, on Bun) and this
 * load in others, so that the CPU read is the interception's alone. Three interceptors are
 * fed the same bytes, on Deno and on Bun, interleaved over `rounds`:
 *
 * - `vf`: the run's interception server, recording a trace per rollout;
 * - `record`: the least any recording interceptor must do (bench/agent_floors.ts);
 * - `pass`: a plain pass-through proxy (bench/agent_floors.ts).
 *
 * Prints, per runtime and dialect, each one's CPU per call, and vf's against both floors
 * (target against `record` ≤ 1.5x; against `pass` reported), the median and range of the
 * rounds' own ratios; the trace's bytes per rollout against the final conversation's own
 * (target ≤ 1.5x); and vf's peak RSS at `rollouts` and at `large` rollouts (target ≤ 1.25x),
 * with load averages (`--large 0` skips that; `--rounds 0` measures only that). `--quick` runs
 * a small workload on the running runtime only, to show the benchmark runs.
 *
 * `deno run -A bench/agent_load.ts [--quick] [--rollouts 200] [--turns 20] [--in-flight 64]
 * [--chunks 300] [--rounds 2] [--large 2000] [--dialects <ids>] [--runtimes bun,deno]`
 * (default: every dialect of lib/dialects/mod.ts, both runtimes)
 *
 * @module
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { join } from "node:path";
import process from "node:process";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { DIALECTS } from "../lib/dialects/mod.ts";
import { BENCH, loadAverages, median, pairedRatios, runtimeArgv, spawnMock } from "./common.ts";
import { PROGRAMS, runRollout, type Workload } from "./agent_workload.ts";
import { flag, textFlag } from "./throughput.ts";

type Runtime = "bun" | "deno";
const SIDES = ["pass", "record", "vf"] as const;
type Side = typeof SIDES[number];

/** What one interceptor process reported after a workload. */
interface Figures {
  cpuMs: number;
  traceCpuMs: number;
  peakRssMB: number;
  calls: number;
  /** Trace bytes over the final conversation's bytes, per rollout (vf only). */
  traceRatios: number[];
  conversationBytes: number[];
}

/** Runs `load` through a fresh interceptor process of `side` on `runtime`. */
async function measure(
  runtime: Runtime,
  side: Side,
  dialect: string,
  mockUrl: string,
  load: Workload,
): Promise<Figures> {
  const [cmd, ...args] = runtimeArgv(runtime, join(BENCH, "agent_child.ts"), [side, mockUrl]);
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
  const waiting: ((line: string) => void)[] = [];
  let ready!: () => void;
  const started = new Promise<void>((resolve) => (ready = resolve));
  createInterface({ input: child.stdout! }).on("line", (line) => {
    if (line === "ready") ready();
    else waiting.shift()?.(line);
  });
  const exited = new Promise<never>((_, reject) =>
    child.on("exit", (code) => reject(new Error(`${runtime} ${side} exited (${code})`)))
  );
  const ask = (line: string) =>
    Promise.race([
      new Promise<string>((resolve) => {
        waiting.push(resolve);
        child.stdin!.write(line + "\n");
      }),
      exited,
    ]);
  try {
    await Promise.race([started, exited]);
    const program = PROGRAMS[dialect]!;
    const traceRatios: number[] = [];
    const conversationBytes: number[] = [];
    let next = 0;
    const worker = async () => {
      while (next < load.rollouts) {
        const i = next++;
        const [, , url, key] = (await ask(`open ${i}`)).split(" ");
        const size = await runRollout(url!, key!, program, i, load);
        const traced = Number((await ask(`close ${i}`)).split(" ")[2]);
        conversationBytes.push(size);
        if (side === "vf") traceRatios.push(traced / size);
      }
    };
    await Promise.all(Array.from({ length: load.inFlight }, worker));
    const report = JSON.parse(await ask("report"));
    const expected = load.rollouts * load.turns;
    if (side === "vf" && report.calls !== expected) {
      throw new Error(`vf recorded ${report.calls} of ${expected} calls`);
    }
    return { ...report, calls: expected, traceRatios, conversationBytes };
  } finally {
    child.kill("SIGKILL");
  }
}

const ms = (v: number) => `${v.toFixed(2)} ms`;
const x = (r: { median: number; min: number; max: number }) =>
  `${r.median.toFixed(2)}x (${r.min.toFixed(2)}–${r.max.toFixed(2)})`;

/** Runs the benchmark and prints its lines; returns true when every target holds. */
export async function agentLoad(options: {
  load: Workload;
  rounds: number;
  large: number;
  runtimes: Runtime[];
  dialects: string[];
}): Promise<boolean> {
  const { load, rounds, runtimes, dialects } = options;
  const mock = await spawnMock(0, {
    runtime: "bun",
    streamChunks: load.chunks,
    answerPadBytes: load.answerBytes,
    splitAnswer: true,
  });
  console.log(
    `agent load  ${load.rollouts} rollouts × ${load.turns} turns, ${load.inFlight} in flight, ` +
      `${load.chunks} SSE chunks per answer, ${rounds} interleaved rounds (${loadAverages()})`,
  );
  let holds = true;
  const seen = new Map<string, Figures[]>();
  const key = (rt: Runtime, dialect: string, side: Side) => `${rt} ${dialect} ${side}`;
  try {
    for (let round = 0; round < rounds; round++) {
      const before = loadAverages();
      for (const rt of runtimes) {
        for (const dialect of dialects) {
          const k = round % SIDES.length; // each round starts one side later
          for (const side of [...SIDES.slice(k), ...SIDES.slice(0, k)]) {
            const figures = await measure(rt, side, dialect, mock.url, load);
            const list = seen.get(key(rt, dialect, side)) ?? [];
            list.push(figures);
            seen.set(key(rt, dialect, side), list);
          }
        }
      }
      console.log(`  round ${round + 1}: ${before} at start, ${loadAverages()} at end`);
    }
    for (const rt of rounds > 0 ? runtimes : []) {
      for (const dialect of dialects) {
        const runs = Object.fromEntries(SIDES.map((s) => [s, seen.get(key(rt, dialect, s))!]));
        const perCall = (f: Figures) => f.cpuMs / f.calls;
        const vfCalls = runs.vf!.map(perCall);
        const againstRecord = pairedRatios(vfCalls, runs.record!.map(perCall));
        const againstPass = pairedRatios(vfCalls, runs.pass!.map(perCall));
        const conversation = median(runs.vf!.flatMap((f) => f.conversationBytes));
        const traceRatios = runs.vf!.flatMap((f) => f.traceRatios);
        const trace = Math.max(...traceRatios);
        const traceShare = median(runs.vf!.map((f) => f.traceCpuMs / f.cpuMs));
        holds &&= againstRecord.median <= 1.5 && trace <= 1.5;
        console.log(
          `  ${rt.padEnd(4)} ${dialect.padEnd(9)} CPU per call: pass-through ` +
            `${ms(median(runs.pass!.map(perCall)))}, recording floor ` +
            `${ms(median(runs.record!.map(perCall)))}, vf ${ms(median(vfCalls))} ` +
            `(${(100 * traceShare).toFixed(0)}% of it writing traces)`,
        );
        console.log(
          `  ${rt.padEnd(4)} ${dialect.padEnd(9)} vf CPU per call ${x(againstRecord)} the ` +
            `recording floor (target ≤ 1.5x), ${x(againstPass)} the pass-through`,
        );
        console.log(
          `  ${rt.padEnd(4)} ${dialect.padEnd(9)} trace bytes per rollout up to ` +
            `${trace.toFixed(2)}x the final conversation's ${
              (conversation / 1024).toFixed(0)
            } KB ` +
            `(median ${median(traceRatios).toFixed(2)}x; target ≤ 1.5x)`,
        );
      }
    }
    for (const rt of options.large > 0 ? runtimes : []) {
      for (const dialect of dialects) {
        // with no rounds (`--rounds 0`), vf alone at `rollouts` first
        const measured = seen.get(key(rt, dialect, "vf")) ??
          [await measure(rt, "vf", dialect, mock.url, load)];
        const small = Math.max(...measured.map((f) => f.peakRssMB));
        const big = await measure(rt, "vf", dialect, mock.url, {
          ...load,
          rollouts: options.large,
        });
        const ratio = big.peakRssMB / small;
        holds &&= ratio <= 1.25;
        console.log(
          `  ${rt.padEnd(4)} ${dialect.padEnd(9)} vf peak RSS ${small.toFixed(0)} MB at ` +
            `${load.rollouts} rollouts, ${big.peakRssMB.toFixed(0)} MB at ${options.large}: ` +
            `${ratio.toFixed(2)}x (target ≤ 1.25x; ${loadAverages()})`,
        );
      }
    }
  } finally {
    mock.stop();
  }
  return holds;
}

/** The ids of every dialect the interception server serves (lib/dialects/mod.ts). */
export function servedDialects(): string[] {
  const ids = Object.keys(DIALECTS);
  const missing = ids.filter((id) => !(id in PROGRAMS));
  if (missing.length > 0) {
    throw new Error(`bench/agent_workload.ts has no program for dialect ${missing.join(", ")}`);
  }
  return ids;
}

/** The workload of the benchmark, or of `--quick`. */
export function agentWorkload(quick: boolean): Workload {
  return quick
    ? { rollouts: 6, turns: 4, inFlight: 3, chunks: 30, answerBytes: 300, toolBytes: 700 }
    : {
      rollouts: flag("rollouts", 200),
      turns: flag("turns", 20),
      inFlight: flag("in-flight", 64),
      chunks: flag("chunks", 300),
      answerBytes: flag("answer-bytes", 3000),
      toolBytes: flag("tool-bytes", 6500),
    };
}

if (import.meta.main) {
  const quick = process.argv.includes("--quick");
  await agentLoad({
    load: agentWorkload(quick),
    rounds: quick ? 1 : flag("rounds", 2),
    large: quick ? 12 : flag("large", 2000),
    runtimes: quick
      ? [runtimeName() as Runtime]
      : (textFlag("runtimes") ?? "bun,deno").split(",") as Runtime[],
    dialects: (textFlag("dialects") ?? servedDialects().join(",")).split(","),
  });
  process.exit(0);
}
