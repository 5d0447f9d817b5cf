/**
 * The interceptor of the agent-load benchmark (bench/agent_load.ts) in a process of its
 * own, so that its CPU is the interception's alone: the load and the provider run in other
 * processes. Modes:
 *
 * - `vf`: the run's interception server (every dialect of lib/dialects/mod.ts) and its
 *   provider client to the mock; a session per rollout, recording into a fresh trace
 *   (lib/rollout/new_trace.ts) that is serialized as traces.jsonl writes it when the
 *   rollout ends, then dropped.
 * - `pass` and `record`: the floors of bench/agent_floors.ts.
 *
 * Driven by lines on stdin, answered on stdout: `open <i>` → `opened <i> <base url>
 * <key>`; `close <i>` → `closed <i> <trace bytes>` (0 for the floors); `report` → one JSON
 * line `{cpuMs, traceCpuMs, peakRssMB, calls}`: the process's CPU since it was ready (the
 * serialization of the traces counted apart, in `traceCpuMs`, and included in `cpuMs`), its
 * peak RSS and the model calls recorded. It prints `ready` once it serves.
 *
 * `bun bench/agent_child.ts <vf|pass|record> <mock url>` (or `deno run -A ...`)
 *
 * @module
 */
import { createInterface } from "node:readline";
import process from "node:process";
import { createProviderClient } from "../lib/clients/provider_client.ts";
import { type InterceptionSession, startInterceptionServer } from "../lib/interception/mod.ts";
import { newTrace, traceTask } from "../lib/rollout/new_trace.ts";
import { redact } from "../kit/secrets.ts";
import { episodeJson } from "../kit/trace/wire_json.ts";
import type { Trace } from "../kit/trace/types.ts";
import { startFloor } from "./agent_floors.ts";
import { peakRssMB } from "./memory_child.ts";

/** The model the run imposes. */
export const RUN_MODEL = "bench-model";
const KEY = "sk-bench";
const encoder = new TextEncoder();

interface Interceptor {
  open(i: number): { url: string; key: string };
  /** Ends rollout `i`; returns the bytes of its trace line. */
  close(i: number): number;
  calls(): number;
}

async function startVf(mockUrl: string): Promise<Interceptor> {
  process.env.VF_BENCH_KEY = KEY;
  const server = await startInterceptionServer();
  const client = createProviderClient({
    baseUrl: mockUrl,
    apiKeyVar: "VF_BENCH_KEY",
    connectTimeoutMs: 120_000,
  });
  const open = new Map<number, { trace: Trace; session: InterceptionSession }>();
  let calls = 0;
  return {
    open(i) {
      const trace = newTrace(
        traceTask("agent_load", { idx: i, prompt: `rollout ${i}` }),
        {},
        "subprocess",
      );
      const session = server.open({ trace, model: RUN_MODEL, sampling: {}, client, limits: {} });
      open.set(i, { trace, session });
      return { url: server.url, key: session.secret };
    },
    close(i) {
      const { trace, session } = open.get(i)!;
      open.delete(i);
      session.close();
      calls += trace.calls.length;
      if (trace.calls.some((c) => c.error !== null)) {
        throw new Error(`rollout ${i}: ${JSON.stringify(trace.calls.find((c) => c.error))}`);
      }
      const started = performance.now();
      const bytes = encoder.encode(redact(episodeJson(trace))).byteLength;
      traceMs += performance.now() - started;
      return bytes;
    },
    calls: () => calls,
  };
}

let traceMs = 0;

if (import.meta.main) {
  const [mode, mockUrl] = process.argv.slice(-2);
  if (mockUrl === undefined) throw new Error("usage: agent_child.ts <vf|pass|record> <mock url>");
  let interceptor: Interceptor;
  if (mode === "vf") interceptor = await startVf(mockUrl);
  else if (mode === "pass" || mode === "record") {
    const floor = await startFloor(mode, mockUrl.replace(/\/v1$/, ""), KEY, RUN_MODEL);
    interceptor = {
      open: () => ({ url: floor.url, key: "sk-program" }),
      close: () => 0,
      calls: () => 0,
    };
  } else throw new Error(`unknown mode "${mode}" (vf, pass or record)`);
  const cpu = process.cpuUsage();
  const lines = createInterface({ input: process.stdin });
  const say = (line: string) => process.stdout.write(line + "\n");
  lines.on("line", (line) => {
    const [verb, arg] = line.split(" ");
    if (verb === "open") {
      const { url, key } = interceptor.open(Number(arg));
      say(`opened ${arg} ${url} ${key}`);
    } else if (verb === "close") say(`closed ${arg} ${interceptor.close(Number(arg))}`);
    else if (verb === "report") {
      const used = process.cpuUsage(cpu);
      say(JSON.stringify({
        cpuMs: (used.user + used.system) / 1000,
        traceCpuMs: traceMs,
        peakRssMB: peakRssMB(),
        calls: interceptor.calls(),
      }));
      process.exit(0);
    }
  });
  say("ready");
}
