/**
 * One side of the streaming benchmark, in its own process: `n` streamed chat completions
 * (`stream: true`) with `c` in flight, each answer read to its end as server-sent events.
 *
 * - `floor`: a plain `fetch` loop posting straight to the mock and reading its streams.
 * - `relay`: the same loop, through the run's interception server (one session per
 *   rollout, a fresh trace each, the run's provider client to the mock): every chunk is
 *   relayed and the call recorded into the trace, as in a `vf eval`.
 *
 * Prints `{mode, n, chunks, wallMs, cpuMs, peakRssMB}` as JSON: CPU and wall time cover
 * the requests only (not start-up); peak RSS is the process's.
 *
 * `bun bench/stream_child.ts <floor|relay> <url> <n> <c>` (or `deno run -A ...`)
 *
 * @module
 */
import process from "node:process";
import { type SessionTrace, startInterceptionServer } from "../lib/model/interception_server.ts";
import { createProviderClient } from "../lib/model/provider_client.ts";
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

if (import.meta.main) {
  const [mode, url, n, c] = process.argv.slice(-4);
  if (url === undefined) throw new Error("usage: stream_child.ts <floor|relay> <url> <n> <c>");
  process.env.VF_BENCH_KEY = "sk-bench";
  let run: () => Promise<number>;
  let close = async () => {};
  if (mode === "floor") {
    run = () => pool(Number(n), Number(c), (i) => streamOnce(url, "sk-bench", i));
  } else if (mode === "relay") {
    const server = await startInterceptionServer();
    // a loaded machine may take seconds to accept 256 connections: no connect deadline here
    const client = createProviderClient({
      baseUrl: url,
      apiKeyVar: "VF_BENCH_KEY",
      connectTimeoutMs: 120_000,
    });
    close = () => server.close();
    run = () =>
      pool(Number(n), Number(c), async (i) => {
        const trace: SessionTrace = {
          id: `t${i}`,
          nodes: [],
          calls: [],
          tools: [],
          stop_condition: null,
        };
        const session = server.open({
          trace,
          model: "bench-model",
          sampling: {},
          client,
          limits: {},
        });
        try {
          const events = await streamOnce(session.endpoint, session.secret, i);
          if (trace.calls.length !== 1) throw new Error("the call was not recorded");
          return events;
        } finally {
          session.close();
        }
      });
  } else {
    throw new Error(`unknown mode "${mode}" (floor or relay)`);
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
