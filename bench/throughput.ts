/**
 * Throughput: `n` single-turn rollouts (addition taskset, null harness, match judge) at
 * concurrency `c` against the loopback mock server, compared in the same process with
 * the floor — a plain `fetch` loop sending the same requests to the same mock at the same
 * concurrency. Prints both walls (median of the repeats) and their ratio, and the wall of
 * the same run answered by the in-process oracle (`-m oracle`: no socket at all), which is
 * what the engine costs per rollout apart from the model call. Beside the walls, the
 * process CPU time per rollout of each (user + system of this process, so not the mock's):
 * the machine's load moves it far less than it moves walls. Last, the CPU time of the work
 * the trace format itself asks of every rollout, measured on an episode of the run: its
 * `traces.jsonl` line's JSON, the task hash Python's `task_key` reproduces, and the line's
 * UTF-8 bytes. No engine can do less per rollout than the model call plus that work, so the
 * two together bound how near the floor a run can come. On Linux, each one's CPU per rollout
 * is also split by thread (bench/thread_cpu.ts): the JavaScript thread's own work apart from
 * the engine's compiler and collector threads and Bun's HTTP client thread. With
 * `--credentials K` and `--answer-kib P` the run's environment holds K more credentials and
 * every answer is P KiB long (bench/user_env.ts); the floor reads the same long answers.
 *
 * `deno run -A bench/throughput.ts [--n 2000] [--c 50] [--latency-ms 0] [--repeats 3]
 * [--credentials 0] [--answer-kib 0]`
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
import { episodeJson } from "../kit/trace/wire_json.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import type { Episode } from "../kit/trace/types.ts";
import { traceTask } from "../lib/rollout/new_trace.ts";
import { askMock } from "./ask_mock.ts";
import { evalArgs, median, spawnMock } from "./common.ts";
import { type ThreadCpu, threadCpuBetween, threadCpuLine, threadTimes } from "./thread_cpu.ts";
import {
  BARE,
  describeEnvironment,
  environmentFlags,
  setCredentialVariables,
  type UserEnvironment,
} from "./user_env.ts";

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

/**
 * Wall and process CPU (user + system) milliseconds of one measured step, and that CPU
 * time by thread where the system tells it (bench/thread_cpu.ts).
 */
interface Timed {
  wallMs: number;
  cpuMs: number;
  threads: ThreadCpu | null;
}

/** Starts the clocks; `stop()` reads them. */
function startClocks(): { stop(): Timed } {
  const threads = threadTimes();
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return {
    stop() {
      const used = process.cpuUsage(cpu);
      return {
        wallMs: performance.now() - wall,
        cpuMs: (used.user + used.system) / 1000,
        threads: threadCpuBetween(threads, threadTimes()),
      };
    },
  };
}

/** The floor: the harness's requests, sent straight to the mock with `c` in flight. */
async function plainFetch(url: string, n: number, c: number): Promise<Timed> {
  const tasks = additionTasks(0, 3);
  const started = startClocks();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const task = tasks.next().value!;
      await askMock(url, ADDITION_SYSTEM_PROMPT, task.prompt, task.answer);
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
  return started.stop();
}

/**
 * One whole run (`vf eval`, in-process) against the mock, or the oracle with `oracle`;
 * returns its wall and CPU time and its last episode. `longAnswers`: the mock's answers
 * end in the number rather than being it.
 */
async function evalRun(
  url: string,
  n: number,
  c: number,
  oracle = false,
  longAnswers = false,
): Promise<Timed & { episode: Episode }> {
  const out = mkdtempSync(join(tmpdir(), "vf-bench-"));
  try {
    const args = evalArgs(url, n, c, out, longAnswers && !oracle);
    if (oracle) args[args.indexOf("-m") + 1] = "oracle";
    const loaded = await loadEvalConfig(args, { cwd: out });
    const runDir = resolveRunDir(loaded.config, out);
    let episode: Episode | null = null;
    const started = startClocks();
    const { summary } = await runEval(loaded, {
      runDir,
      cwd: out,
      onEpisode: (e) => void (episode = e),
    });
    const timed = started.stop();
    if (summary.counts.episodes !== n || summary.reward.mean !== 2 || episode === null) {
      throw new Error(
        `bad run: ${summary.counts.episodes} episodes, reward ${summary.reward.mean}`,
      );
    }
    return { ...timed, episode };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * CPU microseconds per rollout of the work the trace format asks for, done `n` times on
 * `episode`: its `traces.jsonl` line (as the run writes it), the hash of its task's data
 * (as the run computes it) and the line's UTF-8 bytes. The run does all of it once per
 * rollout whatever else it does or does not do.
 */
export function formatWorkCpuUs(episode: Episode, n = 5000): number {
  const encoder = new TextEncoder();
  let bytes = 0;
  const once = () => {
    const identity = traceTask(episode.task.type, episode.task.data as TaskData);
    bytes += encoder.encode(episodeJson(episode)).byteLength + identity.hash.length;
  };
  for (let i = 0; i < n / 10; i++) once(); // warm-up
  const started = startClocks();
  for (let i = 0; i < n; i++) once();
  const { cpuMs } = started.stop();
  if (bytes === 0) throw new Error("nothing was serialized");
  return cpuMs * 1000 / n;
}

/** The figures of {@link throughput}: medians of the repeats. */
export interface ThroughputFigures {
  floorMs: number;
  runMs: number;
  /** `runMs / floorMs`. */
  ratio: number;
  oracleMs: number;
  /** Process CPU per rollout (per request for the floor), in microseconds. */
  floorCpuUs: number;
  runCpuUs: number;
  oracleCpuUs: number;
  /** {@link formatWorkCpuUs} on an episode of the run, in microseconds. */
  formatCpuUs: number;
  /** CPU per rollout by thread of the floor, the run and the oracle run; null off Linux. */
  byThread: { floor: string; run: string; oracle: string } | null;
}

/**
 * Measures the floor, the run and the oracle run, interleaved `repeats` times, in the
 * given environment (default: bare). Credentials set here stay registered in this process.
 */
export async function throughput(
  options: {
    n: number;
    c: number;
    latencyMs: number;
    repeats: number;
    environment?: UserEnvironment;
  },
): Promise<ThroughputFigures> {
  const env = options.environment ?? BARE;
  process.env.VF_BENCH_KEY = "sk-bench";
  setCredentialVariables(env.credentials);
  const long = env.answerPadBytes > 0;
  const mock = await spawnMock(options.latencyMs, { answerPadBytes: env.answerPadBytes });
  try {
    // warm-up: JIT, connection pools, module loading
    await plainFetch(mock.url, 200, options.c);
    await evalRun(mock.url, 200, options.c, false, long);
    await evalRun(mock.url, 200, options.c, true);
    const floors: Timed[] = [];
    const runs: (Timed & { episode: Episode })[] = [];
    const oracles: Timed[] = [];
    const formats: number[] = [];
    for (let i = 0; i < options.repeats; i++) {
      floors.push(await plainFetch(mock.url, options.n, options.c));
      runs.push(await evalRun(mock.url, options.n, options.c, false, long));
      oracles.push(await evalRun(mock.url, options.n, options.c, true));
      formats.push(formatWorkCpuUs(runs[i]!.episode));
    }
    const wall = (t: Timed[]) => median(t.map((x) => x.wallMs));
    const cpuUs = (t: Timed[]) => median(t.map((x) => x.cpuMs)) * 1000 / options.n;
    const threadLine = (t: Timed[]) => {
      const splits = t.map((x) => x.threads);
      return splits.every((x) => x !== null) ? threadCpuLine(splits, options.n) : null;
    };
    const [floorThreads, runThreads, oracleThreads] = [floors, runs, oracles].map(threadLine);
    const floorMs = wall(floors);
    const runMs = wall(runs);
    return {
      floorMs,
      runMs,
      ratio: runMs / floorMs,
      oracleMs: wall(oracles),
      floorCpuUs: cpuUs(floors),
      runCpuUs: cpuUs(runs),
      oracleCpuUs: cpuUs(oracles),
      formatCpuUs: median(formats),
      byThread: floorThreads && runThreads && oracleThreads
        ? { floor: floorThreads, run: runThreads, oracle: oracleThreads }
        : null,
    };
  } finally {
    mock.stop();
  }
}

/**
 * The CPU figures as lines: per rollout, and the run's against the floor's; the trace
 * format's own work against the floor's request; and, on Linux, each one's CPU by thread.
 */
export function cpuLine(r: ThroughputFigures): string {
  const threads = r.byThread === null ? "" : `\n  CPU per rollout by thread — run: ` +
    `${r.byThread.run}; floor: ${r.byThread.floor}; oracle: ${r.byThread.oracle}`;
  return `process CPU per rollout: run ${r.runCpuUs.toFixed(0)} µs, plain-fetch floor ` +
    `${r.floorCpuUs.toFixed(0)} µs per request (${(r.runCpuUs / r.floorCpuUs).toFixed(2)}x), ` +
    `the engine alone (oracle) ${r.oracleCpuUs.toFixed(0)} µs\n  the trace format's own ` +
    `work per rollout (its JSON line, the task hash, UTF-8): ${r.formatCpuUs.toFixed(1)} µs = ` +
    `${(r.formatCpuUs / r.floorCpuUs).toFixed(2)}x the floor's request${threads}`;
}

if (import.meta.main) {
  const o = {
    n: flag("n", 2000),
    c: flag("c", 50),
    latencyMs: flag("latency-ms", 0),
    repeats: flag("repeats", 3),
    environment: environmentFlags(),
  };
  const r = await throughput(o);
  console.log(
    `throughput  N=${o.n} C=${o.c} latency=${o.latencyMs}ms, ${
      describeEnvironment(o.environment)
    }: run ${r.runMs.toFixed(0)} ms, ` +
      `plain-fetch floor ${r.floorMs.toFixed(0)} ms, ratio ${r.ratio.toFixed(2)}x ` +
      `(${(o.n / (r.runMs / 1000)).toFixed(0)} rollouts/s); the engine alone (oracle, no ` +
      `socket) ${r.oracleMs.toFixed(0)} ms = ${(r.oracleMs / r.floorMs).toFixed(2)}x the floor`,
  );
  console.log(`  ${cpuLine(r)}`);
  process.exit(0);
}
