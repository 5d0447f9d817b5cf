/**
 * Benchmark: Prime control-plane requests per rollout, and status-poll requests per poll
 * round ("tick"), for N sandboxes started concurrently against the loopback Prime fake.
 * Each rollout starts a sandbox, runs one command and confirms its stop. Batching makes the
 * polls per tick ≈ ceil(N/100) instead of N.
 *
 *   deno run -A bench/prime_polls.ts [sandboxes=100] [pending-reads=3]
 *   bun bench/prime_polls.ts [sandboxes=100] [pending-reads=3]
 *
 * @module
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { getArgs } from "../kit/_runtime/args.ts";
import { resolvePrimeConfig } from "../plugins/runtimes/prime/config.ts";
import { PrimeRuntime, sharedStatusPoller } from "../plugins/runtimes/prime/runtime.ts";
import { CONTROL_KINDS, startPrimeFake } from "../tests/fakes/prime_server.ts";

const [nArg, readsArg] = getArgs();
const N = Number(nArg ?? 100);
const READS = Number(readsArg ?? 3);

const cache = mkdtempSync(join(tmpdir(), "vf-bench-prime-"));
process.env.VF_CACHE_DIR = cache;
const fake = await startPrimeFake({ readsUntilRunning: READS });
const settings = { baseUrl: fake.url, apiKey: fake.apiKey, teamId: null };
const poller = sharedStatusPoller(settings);
const started = Date.now();
try {
  const runtimes = Array.from(
    { length: N },
    (_, i) =>
      new PrimeRuntime(resolvePrimeConfig({ timeout: 600 }), `bench-${i}`, {
        settings,
        // production timing, except a shorter first poll delay to keep the bench brief
        creation: { baseDelayMs: 250 },
      }),
  );
  const results = await Promise.allSettled(runtimes.map(async (rt) => {
    await rt.start();
    try {
      const r = await rt.run(["echo", "ok"]);
      if (r.stdout !== "ok\n") throw new Error(`unexpected output ${JSON.stringify(r)}`);
    } finally {
      await rt.stopConfirmed();
    }
  }));
  const failed = results.filter((r) => r.status === "rejected");
  const control = fake.requests.filter((r) => CONTROL_KINDS.has(r.kind));
  const byKind = new Map<string, number>();
  for (const r of control) byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
  const polls = fake.requests.filter((r) => r.kind === "batch" || r.kind === "get");
  const idsPolled = polls.reduce((n, r) => n + (r.statusIds?.length ?? 0), 0);
  const rounds = poller.rounds;
  const row = (k: string, v: string | number) => console.log(`${k.padEnd(44)} ${v}`);
  console.log(`Prime fake: ${N} concurrent sandboxes, PENDING for ${READS} status reads each\n`);
  row("rollouts ok / failed", `${N - failed.length} / ${failed.length}`);
  row("wall time", `${((Date.now() - started) / 1000).toFixed(1)} s`);
  row("control-plane requests", control.length);
  row("control-plane requests per rollout", (control.length / N).toFixed(2));
  for (const [k, v] of [...byKind].sort()) row(`  ${k} per rollout`, (v / N).toFixed(2));
  row("status-poll requests", polls.length);
  row("poll rounds (ticks)", rounds);
  row("status-poll requests per tick", (polls.length / Math.max(1, rounds)).toFixed(2));
  row("expected with batching: ceil(N/100)", Math.ceil(N / 100));
  row("sandbox statuses read per tick", (idsPolled / Math.max(1, rounds)).toFixed(1));
  row("largest batch (ids)", Math.max(0, ...polls.map((r) => r.statusIds?.length ?? 0)));
  row("requests without batching (one GET each)", idsPolled);
  row("live sandboxes at the end", fake.liveSandboxes());
  if (failed.length) console.log("\nfirst failure:", (failed[0] as PromiseRejectedResult).reason);
} finally {
  await fake.close();
  rmSync(cache, { recursive: true, force: true });
}
