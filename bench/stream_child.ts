/**
 * One side of the streaming benchmark, in its own process: `n` streamed chat completions
 * (`stream: true`) with `c` in flight, each answer read to its end as server-sent events.
 *
 * - `floor`: a plain `fetch` loop posting straight to the mock and reading its streams.
 * - `relay`: the same loop, through the run's interception server (one session per
 *   rollout, a fresh trace each, the run's provider client to the mock): every chunk is
 *   relayed and the call recorded into the trace, as in a `vf eval`. The loop reading the
 *   relayed streams runs in this process too, so its CPU counts as the relay's.
 * - `relay-apart`: the same relay, the reading loop in a process of its own (`read`), as
 *   a program in a runtime reads what the run relays to it: this process's CPU is the
 *   relay's alone (sessions opened, chunks relayed and recorded, sessions closed).
 * - `read`: the reading loop of `relay-apart`, over the sessions listed in a file.
 *
 * Prints `{mode, n, chunks, wallMs, cpuMs, peakRssMB}` as JSON: CPU and wall time cover
 * the requests only (not start-up); peak RSS is the process's.
 *
 * `bun bench/stream_child.ts <floor|relay|relay-apart> <url> <n> <c>` (or `deno run -A ...`);
 * `... read <sessions.json> <n> <c>`
 *
 * @module
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../lib/interception/mod.ts";
import { createProviderClient, type ProviderClient } from "../lib/clients/provider_client.ts";
import { lastJsonLine, runChild, scriptArgv } from "./common.ts";
import { peakRssMB } from "./memory_child.ts";

/** Reads a server-sent event stream to its end; returns the events that carried data. */
async function readEvents(res: Response): Promise<number> {
  if (!res.ok || !res.body) throw new Error(`stream request failed: ${res.status}`);
  const decoder = new TextDecoder();
  let events = 0;
  let tail = "";
  for await (const bytes of res.body) {
    const text = tail + decoder.decode(bytes, { stream: true });
    let at = 0;
    for (;;) {
      const end = text.indexOf("\n\n", at);
      if (end < 0) break;
      if (text.startsWith("data: ", at)) events++;
      at = end + 2;
    }
    tail = text.slice(at);
  }
  return events;
}

/** Posts one streamed question to `endpoint` with `secret`; returns the events read. */
async function streamOnce(endpoint: string, secret: string, i: number): Promise<number> {
  const res = await fetch(`${endpoint}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({
      model: "bench-model",
      stream: true,
      messages: [
        { role: "system", content: "Answer with the final number only." },
        { role: "user", content: `What is ${100 + (i % 900)} + 1?` },
      ],
    }),
  });
  return await readEvents(res);
}

/** Runs `n` streams with `c` in flight through `one`; returns the events read in all. */
async function pool(n: number, c: number, one: (i: number) => Promise<number>): Promise<number> {
  let next = 0;
  let events = 0;
  const worker = async () => {
    while (next < n) {
      const got = await one(next++);
      events += got;
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
  return events;
}

/** A session of the interception server for rollout `i`, with the trace it records into. */
function openSession(server: InterceptionServer, client: ProviderClient, i: number) {
  const trace: SessionTrace = {
    id: `t${i}`,
    nodes: [],
    calls: [],
    tools: [],
    stop_condition: null,
  };
  const session = server.open({ trace, model: "bench-model", sampling: {}, client, limits: {} });
  return { trace, session };
}

/** The run's interception server and its provider client to the mock at `url`. */
async function startRelay(url: string) {
  const server = await startInterceptionServer();
  // a loaded machine may take seconds to accept 256 connections: no connect deadline here
  const client = createProviderClient({
    baseUrl: url,
    apiKeyVar: "VF_BENCH_KEY",
    connectTimeoutMs: 120_000,
  });
  return { server, client };
}

/**
 * `relay-apart`: opens `n` sessions, has a `read` process read them `c` at a time, checks
 * every call was recorded, closes them; returns the events the reader read.
 */
async function relayApart(url: string, n: number, c: number): Promise<number> {
  const { server, client } = await startRelay(url);
  const dir = mkdtempSync(join(tmpdir(), "vf-bench-stream-"));
  try {
    const opened = Array.from({ length: n }, (_, i) => openSession(server, client, i));
    const file = join(dir, "sessions.json");
    writeFileSync(
      file,
      JSON.stringify(opened.map(({ session }) => [session.endpoint, session.secret])),
    );
    const out = await runChild(
      scriptArgv(import.meta.filename!, ["read", file, String(n), String(c)]),
    );
    const read = lastJsonLine<{ chunks: number }>(out);
    for (const { trace, session } of opened) {
      if (trace.calls.length !== 1) throw new Error("a call was not recorded");
      session.close();
    }
    return read.chunks;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await server.close();
  }
}

if (import.meta.main) {
  const [mode, url, n, c] = process.argv.slice(-4);
  if (url === undefined) {
    throw new Error("usage: stream_child.ts <floor|relay|relay-apart|read> <url> <n> <c>");
  }
  process.env.VF_BENCH_KEY = "sk-bench";
  let run: () => Promise<number>;
  let close = async () => {};
  if (mode === "floor") {
    run = () => pool(Number(n), Number(c), (i) => streamOnce(url, "sk-bench", i));
  } else if (mode === "read") {
    const sessions = JSON.parse(readFileSync(url, "utf8")) as [string, string][];
    run = () => pool(Number(n), Number(c), (i) => streamOnce(...sessions[i]!, i));
  } else if (mode === "relay-apart") {
    run = () => relayApart(url, Number(n), Number(c));
  } else if (mode === "relay") {
    const { server, client } = await startRelay(url);
    close = () => server.close();
    run = () =>
      pool(Number(n), Number(c), async (i) => {
        const { trace, session } = openSession(server, client, i);
        try {
          const events = await streamOnce(session.endpoint, session.secret, i);
          if (trace.calls.length !== 1) throw new Error("the call was not recorded");
          return events;
        } finally {
          session.close();
        }
      });
  } else {
    throw new Error(`unknown mode "${mode}" (floor, relay, relay-apart or read)`);
  }
  const cpu = process.cpuUsage();
  const started = performance.now();
  const chunks = await run();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  await close();
  process.stdout.write(
    JSON.stringify({
      mode,
      n: Number(n),
      chunks,
      wallMs,
      cpuMs: (used.user + used.system) / 1000,
      peakRssMB: peakRssMB(),
    }) + "\n",
  );
  process.exit(0);
}
