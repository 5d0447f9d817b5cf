/**
 * All benchmarks, one after the other, with the figures docs/performance.md quotes: in-process
 * throughput against the plain-fetch floor, the upstream leg's transports, whole processes
 * against one mock (floors, the Bun binary, `vf` under deno, promptfoo when installed),
 * streaming relay against a fetch loop, an agent-like load of long re-sent conversations
 * through every dialect against two floors (bench/agent_load.ts), peak RSS at two run sizes,
 * recording long conversations, redaction, binary startup, and last the in-process throughput again in a
 * user-like environment (ten more credentials, 32 KiB answers: bench/user_env.ts; last,
 * because the credentials it sets stay registered). Load averages are printed with every figure.
 * `deno task bench` (or `bun bench/run_all.ts`). Figures only: nothing here is a test.
 *
 * @module
 */
import { cpus } from "node:os";
import process from "node:process";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { agentLoad, agentWorkload, servedDialects } from "./agent_load.ts";
import { loadAverages } from "./common.ts";
import { memory } from "./memory.ts";
import { printLongConversations } from "./long_conversation.ts";
import { printRedact } from "./redact.ts";
import { printStartup } from "./startup.ts";
import { streaming } from "./streaming.ts";
import { cpuLine, flag, throughput } from "./throughput.ts";
import { printUpstream } from "./upstream.ts";
import { wholeProcess } from "./whole_process.ts";
import { describeEnvironment, type UserEnvironment } from "./user_env.ts";

const version = (globalThis as { Deno?: { version: { deno: string } } }).Deno?.version.deno ??
  process.versions.bun ?? process.version;
console.log(
  `verifiers-ts benchmarks on ${runtimeName()} ${version}, ${cpus().length} CPUs, ${loadAverages()}`,
);
const n = flag("n", 2000);
const c = flag("c", 50);
const t = { n, c, latencyMs: flag("latency-ms", 0), repeats: 3 };
const tp = await throughput(t);
console.log(
  `throughput  in-process, ${runtimeName()}, N=${t.n} C=${t.c} latency=${t.latencyMs}ms: run ` +
    `${tp.runMs.toFixed(0)} ms, plain-fetch floor ${tp.floorMs.toFixed(0)} ms, ratio ` +
    `${tp.ratio.toFixed(2)}x (target ≤ 1.5x; ${loadAverages()}); the engine alone (oracle, no ` +
    `socket) ${tp.oracleMs.toFixed(0)} ms = ${(tp.oracleMs / tp.floorMs).toFixed(2)}x the floor`,
);
console.log(`  ${cpuLine(tp)}`);
await printUpstream({ n: 2 * n, c, rounds: 3 });
await wholeProcess({ n, c, rounds: flag("rounds", 3) });
await streaming({ n: flag("stream-n", 512), c: 256, chunks: 500, rounds: 3 });
await agentLoad({
  load: agentWorkload(false),
  rounds: 2,
  large: flag("agent-large", 2000),
  runtimes: ["bun", "deno"],
  dialects: servedDialects(),
});
await memory({ small: 2000, large: flag("large", 50_000), c });
printLongConversations();
printRedact();
printStartup(11);
const userLike: UserEnvironment = { credentials: 10, answerPadBytes: 32 << 10 };
const ul = await throughput({ ...t, environment: userLike });
console.log(
  `throughput  in-process, ${runtimeName()}, ${describeEnvironment(userLike)}: run ` +
    `${ul.runMs.toFixed(0)} ms, plain-fetch floor ${ul.floorMs.toFixed(0)} ms, ratio ` +
    `${ul.ratio.toFixed(2)}x (${loadAverages()})`,
);
console.log(`  ${cpuLine(ul)}`);
process.exit(0);
