/**
 * The upstream leg alone: `n` chat completions posted to the loopback mock with `c` in
 * flight, the reply read and parsed, through three transports in this process — the
 * runtime's `fetch`, `node:http` with a keep-alive agent (the provider client's transport
 * before `lib/clients/http1/`), and the provider client itself (`lib/clients/http1/`) — in
 * interleaved rounds. Prints wall and CPU (median of the rounds) and each one's CPU per
 * request against `fetch`.
 *
 * `--before <checkout>` adds that checkout's provider client to the rounds.
 *
 * `deno run -A bench/upstream.ts [--n 4000] [--c 50] [--rounds 3] [--before <checkout>]`
 * (or `bun bench/upstream.ts ...`)
 *
 * @module
 */
import { Buffer } from "node:buffer";
import http from "node:http";
import process from "node:process";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { createProviderClient } from "../lib/clients/provider_client.ts";
import { loadAverages, median, spawnMock } from "./common.ts";
import { flag, textFlag } from "./throughput.ts";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

type Post = (body: string) => Promise<string>;

function viaFetch(url: string): Post {
  return async (body) => {
    const res = await fetch(`${url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer sk-bench" },
      body,
    });
    return await res.text();
  };
}

function viaNodeHttp(url: string): Post {
  const target = new URL(`${url}/chat/completions`);
  const agent = new http.Agent({ keepAlive: true });
  return (body) =>
    new Promise((resolve, reject) => {
      const req = http.request({
        hostname: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        agent,
        headers: {
          "content-type": "application/json",
          authorization: "Bearer sk-bench",
          "content-length": String(Buffer.byteLength(body)),
        },
      }, (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => resolve(Buffer.concat(parts).toString()));
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(body);
    });
}

function viaProviderClient(url: string, create = createProviderClient): Post {
  process.env.VF_BENCH_KEY = "sk-bench";
  const client = create({ baseUrl: url, apiKeyVar: "VF_BENCH_KEY" });
  const encoder = new TextEncoder();
  return async (body) => {
    const res = await client.send({ path: "/chat/completions", body: encoder.encode(body) });
    if (res.kind !== "json") throw new Error("expected a JSON reply");
    return res.text;
  };
}

/** One round: `n` posts, `c` in flight; returns wall and CPU milliseconds. */
async function round(post: Post, n: number, c: number): Promise<{ wall: number; cpu: number }> {
  let next = 0;
  const started = performance.now();
  const cpu0 = process.cpuUsage();
  await Promise.all(Array.from({ length: c }, async () => {
    while (next < n) {
      const i = next++;
      const text = await post(JSON.stringify({
        model: "bench-model",
        messages: [{ role: "user", content: `What is ${i} + 1?` }],
      }));
      const reply = JSON.parse(text);
      if (reply.choices[0].message.content !== String(i + 1)) throw new Error("wrong answer");
    }
  }));
  const cpu = process.cpuUsage(cpu0);
  return { wall: performance.now() - started, cpu: (cpu.user + cpu.system) / 1000 };
}

/**
 * Runs the rounds and prints each transport's wall and CPU (medians) and its CPU against
 * `fetch`'s; `before`: a checkout whose provider client joins the rounds.
 */
export async function printUpstream(
  options: { n: number; c: number; rounds: number; before?: string | undefined },
): Promise<void> {
  const { n, c, rounds } = options;
  const mock = await spawnMock(0);
  try {
    const transports: [string, Post][] = [
      ["fetch", viaFetch(mock.url)],
      ["node:http", viaNodeHttp(mock.url)],
      ["provider client", viaProviderClient(mock.url)],
    ];
    if (options.before !== undefined) {
      const module = pathToFileURL(join(options.before, "lib", "model", "provider_client.ts"));
      const { createProviderClient: create } = await import(module.href);
      transports.push(["provider client (before)", viaProviderClient(mock.url, create)]);
    }
    const figures = new Map<string, { wall: number[]; cpu: number[] }>();
    for (const [name, post] of transports) {
      await round(post, 200, c); // warm-up: JIT, connections
      figures.set(name, { wall: [], cpu: [] });
    }
    for (let r = 0; r < rounds; r++) {
      for (const [name, post] of transports) {
        const { wall, cpu } = await round(post, n, c);
        figures.get(name)!.wall.push(wall);
        figures.get(name)!.cpu.push(cpu);
      }
    }
    const floorCpu = median(figures.get("fetch")!.cpu);
    console.log(
      `upstream on ${runtimeName()}: ${n} posts, ${c} in flight, ${rounds} interleaved rounds ` +
        `(${loadAverages()})`,
    );
    for (const [name, f] of figures) {
      const cpu = median(f.cpu);
      console.log(
        `  ${name.padEnd(25)} wall ${median(f.wall).toFixed(0).padStart(5)} ms  CPU ${
          cpu.toFixed(0).padStart(5)
        } ms  = ${(cpu / floorCpu).toFixed(2)}x fetch's CPU`,
      );
    }
  } finally {
    mock.stop();
  }
}

if (import.meta.main) {
  await printUpstream({
    n: flag("n", 4000),
    c: flag("c", 50),
    rounds: flag("rounds", 3),
    before: textFlag("before"),
  });
  process.exit(0);
}
