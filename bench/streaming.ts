/**
 * Streaming: `n` rollouts whose answers stream as `chunks` server-sent events each, `c` in
 * flight, through the interception server (bench/stream_child.ts `relay`) against a plain
 * `fetch` loop reading the same streams from the same mock (`floor`), each in its own
 * process, on Bun and on Deno, interleaved over `rounds`. One Bun mock serves all of them.
 *
 * The relay is measured twice: with the loop reading the relayed streams in its own
 * process (`relay-apart`: what a program in a runtime does; the process's CPU is the
 * relay's alone), and with that loop in the relay's process (`relay`), its CPU counted as
 * the relay's.
 *
 * Prints chunks per CPU-second, wall and peak RSS of each, and each relay's CPU per chunk
 * as a multiple of its runtime's floor (target ≤ 1.5x), with load averages. The apart
 * relay's wall includes its reader's start-up.
 *
 * `deno run -A bench/streaming.ts [--n 512] [--c 256] [--chunks 500] [--rounds 3]`
 *
 * @module
 */
import { join } from "node:path";
import process from "node:process";
import {
  BENCH,
  lastJsonLine,
  loadAverages,
  median,
  runChild,
  runtimeArgv,
  spawnMock,
} from "./common.ts";
import { flag } from "./throughput.ts";

/** The sides measured: the floor and the relay, its reader apart or in its process. */
const SIDES = ["floor", "relay-apart", "relay"] as const;
type Side = typeof SIDES[number];
const LABELS: Record<Side, string> = {
  floor: "plain fetch                ",
  "relay-apart": "vf relay, reader apart     ",
  relay: "vf relay, reader in process",
};

interface StreamFigures {
  mode: string;
  n: number;
  chunks: number;
  wallMs: number;
  cpuMs: number;
  peakRssMB: number;
}

/** One side's result: medians over the rounds. */
export interface StreamResult {
  chunksPerCpuS: number;
  wallMs: number;
  peakRssMB: number;
}

/** Runs the rounds; returns, per runtime, both sides and the CPU-per-chunk ratio. */
export async function streaming(
  options: { n: number; c: number; chunks: number; rounds: number },
): Promise<Record<string, Record<Side, StreamResult & { ratio: number }>>> {
  const mock = await spawnMock(0, { runtime: "bun", streamChunks: options.chunks });
  const sides = (["bun", "deno"] as const).flatMap((rt) => SIDES.map((mode) => ({ rt, mode })));
  const seen = new Map<string, StreamFigures[]>(sides.map((s) => [`${s.rt} ${s.mode}`, []]));
  const once = async (rt: "bun" | "deno", mode: string): Promise<StreamFigures> => {
    const argv = runtimeArgv(rt, join(BENCH, "stream_child.ts"), [
      mode,
      mock.url,
      String(options.n),
      String(options.c),
    ]);
    const r = lastJsonLine<StreamFigures>(await runChild(argv));
    // every answer: `chunks` content events, a finish event and `[DONE]` (no usage asked)
    const expected = options.n * (options.chunks + 2);
    if (r.chunks < expected) throw new Error(`${rt} ${mode}: ${r.chunks} of ${expected} events`);
    return r;
  };
  try {
    for (const s of sides) await once(s.rt, s.mode); // warm-up (deno's compile cache)
    for (let round = 0; round < options.rounds; round++) {
      const before = loadAverages();
      const k = round % sides.length; // each round starts one side later
      for (const s of [...sides.slice(k), ...sides.slice(0, k)]) {
        seen.get(`${s.rt} ${s.mode}`)!.push(await once(s.rt, s.mode));
      }
      console.log(`  round ${round + 1}: ${before} at start, ${loadAverages()} at end`);
    }
  } finally {
    mock.stop();
  }
  const summarize = (runs: StreamFigures[]): StreamResult => ({
    chunksPerCpuS: median(runs.map((r) => r.chunks / (r.cpuMs / 1000))),
    wallMs: median(runs.map((r) => r.wallMs)),
    peakRssMB: Math.max(...runs.map((r) => r.peakRssMB)),
  });
  const out: Record<string, Record<Side, StreamResult & { ratio: number }>> = {};
  console.log(
    `streaming  N=${options.n} C=${options.c}, ${options.chunks} SSE chunks per answer, ` +
      `${options.rounds} interleaved rounds (${loadAverages()})`,
  );
  for (const rt of ["bun", "deno"]) {
    const floor = summarize(seen.get(`${rt} floor`)!);
    const sides = {} as Record<Side, StreamResult & { ratio: number }>;
    for (const side of SIDES) {
      const r = summarize(seen.get(`${rt} ${side}`)!);
      const ratio = floor.chunksPerCpuS / r.chunksPerCpuS;
      sides[side] = { ...r, ratio };
      console.log(
        `  ${rt.padEnd(4)} ${LABELS[side]} ${(r.chunksPerCpuS / 1000).toFixed(0)}k chunks/CPU-s, ` +
          `wall ${(r.wallMs / 1000).toFixed(2)} s, peak RSS ${r.peakRssMB.toFixed(0)} MB` +
          (side === "floor" ? "" : `, CPU per chunk ${ratio.toFixed(2)}x the floor`) +
          (side === "relay-apart" ? " (target ≤ 1.5x)" : ""),
      );
    }
    out[rt] = sides;
  }
  return out;
}

if (import.meta.main) {
  await streaming({
    n: flag("n", 512),
    c: flag("c", 256),
    chunks: flag("chunks", 500),
    rounds: flag("rounds", 3),
  });
  process.exit(0);
}
