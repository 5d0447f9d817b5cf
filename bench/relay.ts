/**
 * The model relay's cost on the host: `c` programs' streams at once (default 64), each
 * `chunks` server-sent events, read by a reader process over a direct loopback connection
 * (`direct`, the baseline) and through the relay (`relay`: kit/relay/host.ts with its
 * in-sandbox end as a child of this process, as a sandbox's command session would be).
 * The SSE server and the relay's host end run in this process, so its CPU per call is what
 * the host pays; the reader and the in-sandbox end are other processes. Rounds interleave.
 *
 * Prints CPU per call of each, the ratio relay/direct (target ≤ 1.5x) and the bytes on the
 * command channel per byte of payload.
 *
 * `deno run -A bench/relay.ts [--c 64] [--calls 256] [--chunks 200] [--rounds 3]`
 *
 * @module
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { openRelay } from "../kit/relay/host.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import { spawnLive } from "../kit/_runtime/spawn_live.ts";
import { loadAverages, median } from "./common.ts";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const C = flag("c", 64);
const CALLS = flag("calls", 256);
const CHUNKS = flag("chunks", 200);
const ROUNDS = flag("rounds", 3);

const event = (i: number) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `token ${i} ` } }] })}\n\n`;
let payloadBytes = 0;
const server = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/event-stream" });
  let i = 0;
  const next = () => {
    while (i < CHUNKS) {
      const chunk = event(i++);
      payloadBytes += chunk.length;
      if (!res.write(chunk)) return void res.once("drain", next);
    }
    res.end("data: [DONE]\n\n");
  };
  next();
});
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const serverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

const dir = mkdtempSync(join(tmpdir(), "vf-bench-relay-"));
const reader = join(dir, "reader.mjs");
writeFileSync(
  reader,
  `const [url, c, calls] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
let left = calls;
async function worker() {
  while (left-- > 0) {
    const r = await fetch(url + "/chat/completions", { method: "POST", body: "{}" });
    for await (const _ of r.body) {}
  }
}
await Promise.all(Array.from({ length: c }, worker));
`,
);

/** A runtime whose live programs are children of this process (a sandbox's stand-in). */
const runtime = {
  info: { type: "bench", id: null },
  isLocal: false,
  write: (path: string, data: string) => Promise.resolve(writeFileSync(path, data)),
  spawn: (argv: string[]) =>
    Promise.resolve(spawnLive(argv, { cwd: dir, env: { PATH: process.env.PATH ?? "" } })),
} as unknown as Runtime;

/** Host CPU (ms) per call while the reader reads `CALLS` streams from `url`. */
async function measure(url: string): Promise<number> {
  const before = process.cpuUsage();
  const child = spawn(process.execPath.includes("deno") ? "node" : process.execPath, [
    reader,
    url,
    String(C),
    String(CALLS),
  ], { stdio: ["ignore", "inherit", "inherit"] });
  await new Promise((r) => child.on("exit", r));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000 / CALLS;
}

const direct: number[] = [];
const relayed: number[] = [];
let channel = 0;
let payload = 0;
for (let round = 0; round < ROUNDS; round++) {
  direct.push(await measure(serverUrl));
  const relay = await openRelay(runtime, serverUrl);
  const [bytes0, payload0] = [relay.channelBytes(), payloadBytes];
  relayed.push(await measure(relay.endpoint));
  channel += relay.channelBytes() - bytes0;
  payload += payloadBytes - payload0;
  await relay.close();
}
const [d, r] = [median(direct), median(relayed)];
console.log(
  `relay bench: ${C} streams at once, ${CALLS} calls of ${CHUNKS} events, ${ROUNDS} rounds`,
);
console.log(`  direct  ${d.toFixed(3)} ms host CPU per call`);
console.log(`  relay   ${r.toFixed(3)} ms host CPU per call`);
console.log(`  ratio   ${(r / d).toFixed(2)}x (target <= 1.5x)`);
console.log(`  channel ${(channel / payload).toFixed(3)} bytes per payload byte`);
console.log(`  ${loadAverages()}`);
server.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
