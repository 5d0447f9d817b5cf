import "./_builtins.ts";
import assert from "node:assert/strict";
import { closeSync, openSync, readSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import type { RunStats } from "../lib/run/run_eval.ts";
import { newPoolStats, runPool } from "../lib/run/scheduler.ts";
import { fastArgs, run, tmp } from "./_run.ts";
import { generated } from "./fixtures/run/fast_plugins.ts";
import { at } from "./_assert.ts";

/**
 * Counts the newline-terminated lines of a file without decoding it (it is large), and
 * returns the first and last lines.
 */
function scanLines(path: string): { count: number; first: string; last: string } {
  const fd = openSync(path, "r");
  const buf = new Uint8Array(1 << 22);
  const decoder = new TextDecoder();
  let count = 0;
  let first = "";
  let tail = new Uint8Array(0);
  try {
    for (;;) {
      const got = readSync(fd, buf, 0, buf.length, null);
      if (got === 0) break;
      const chunk = buf.subarray(0, got);
      let at = chunk.indexOf(10);
      if (count === 0 && first === "" && at >= 0) first = decoder.decode(chunk.subarray(0, at));
      while (at >= 0) {
        count++;
        at = chunk.indexOf(10, at + 1);
      }
      if (got >= 1 << 16) tail = chunk.slice(got - (1 << 16));
      else {
        const keep = new Uint8Array(tail.length + got);
        keep.set(tail);
        keep.set(chunk, tail.length);
        tail = keep.slice(Math.max(0, keep.length - (1 << 16)));
      }
    }
  } finally {
    closeSync(fd);
  }
  const text = decoder.decode(tail);
  assert.ok(text.endsWith("\n"), "the file ends with a newline");
  const lines = text.slice(0, -1).split("\n");
  return { count, first, last: at(lines, -1) };
}

describe("streaming scheduler", () => {
  it(
    "runs 100,000 tasks with bounded live state, pulling tasks lazily",
    { timeout: 120_000 },
    async () => {
      const N = 100_000;
      const C = 32;
      const cwd = tmp();
      const firstLoad = generated.length;
      let checks = 0;
      let worstLag = 0;
      let maxLive = 0;
      let maxRuntimes = 0;
      const onStats = (s: RunStats) => {
        // the main pass is the second load (the first one only counted)
        const built = generated[firstLoad + 1] ?? 0;
        worstLag = Math.max(worstLag, built - s.written);
        maxLive = Math.max(maxLive, s.liveEpisodes);
        maxRuntimes = Math.max(maxRuntimes, s.liveRuntimes);
        checks++;
      };
      try {
        const { runDir, summary } = await run(
          [...fastArgs(N), "-n", String(N), "-c", String(C)],
          cwd,
          { onStats },
        );
        assert.equal(checks, N, "one stats call per episode written");
        assert.equal(generated[firstLoad], N, "the counting pass");
        assert.equal(generated[firstLoad + 1], N, "the main pass built each task once");
        assert.ok(maxLive <= C, `at most ${C} episodes live, saw ${maxLive}`);
        assert.ok(worstLag <= C + 1, `tasks built ahead of the written ones: ${worstLag}`);
        assert.ok(maxRuntimes <= C, `runtimes held: ${maxRuntimes}`);
        assert.equal(summary.counts.episodes, N);
        assert.equal(summary.counts.expected, N);
        assert.equal(summary.reward.mean, 0.5);
        const { count, first, last } = scanLines(join(runDir, "traces.jsonl"));
        assert.equal(count, N);
        for (const line of [first, last]) assert.equal(JSON.parse(line).traces.length, 1);
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    },
  );

  it("keeps exactly `concurrency` items in flight and hands each result on at once", async () => {
    const stats = newPoolStats();
    const results: number[] = [];
    let pulledAhead = 0;
    async function* source() {
      for (let i = 0; i < 40; i++) {
        pulledAhead = Math.max(pulledAhead, stats.pulled - stats.finished);
        yield i;
      }
    }
    await runPool<number, number>({
      source: source(),
      concurrency: 5,
      signal: new AbortController().signal,
      stats,
      run: async (i) => {
        await new Promise((r) => setTimeout(r, 2 + (i % 3)));
        return i * 2;
      },
      onResult: (r) => results.push(r),
    });
    assert.equal(stats.maxInFlight, 5);
    assert.equal(stats.inFlight, 0);
    assert.ok(pulledAhead <= 5, `pulled ahead: ${pulledAhead}`);
    assert.deepEqual(results.sort((a, b) => a - b), Array.from({ length: 40 }, (_, i) => i * 2));
  });

  it("stops pulling when aborted and lets the items in flight finish", async () => {
    const ctrl = new AbortController();
    const stats = newPoolStats();
    const done: number[] = [];
    async function* source() {
      for (let i = 0;; i++) yield i;
    }
    await runPool<number, number>({
      source: source(),
      concurrency: 3,
      signal: ctrl.signal,
      stats,
      run: async (i) => {
        if (i === 4) ctrl.abort();
        await new Promise((r) => setTimeout(r, 5));
        return i;
      },
      onResult: (r) => done.push(r),
    });
    assert.ok(done.includes(4), "the item in flight at the abort finished");
    assert.ok(stats.finished <= 7, `finished ${stats.finished}`);
    assert.equal(stats.inFlight, 0);
  });

  it("lets the event loop turn while no item waits on I/O", { timeout: 60_000 }, async () => {
    // items answered by promise reactions alone refill the microtask queue as fast as it
    // drains: without a turn between items the timer below (and with it the abort) would
    // run only once the whole source had been run
    const total = 200_000;
    const ctrl = new AbortController();
    const stats = newPoolStats();
    let finishedAtTimer = -1;
    setTimeout(() => {
      finishedAtTimer = stats.finished;
      ctrl.abort();
    }, 0);
    async function* source() {
      for (let i = 0; i < total; i++) yield i;
    }
    await runPool<number, number>({
      source: source(),
      concurrency: 8,
      signal: ctrl.signal,
      stats,
      run: async (i) => {
        for (let k = 0; k < 20; k++) await null;
        return i;
      },
      onResult: () => {},
    });
    assert.ok(finishedAtTimer >= 0 && finishedAtTimer < total, `timer ran at ${finishedAtTimer}`);
    assert.ok(stats.finished < total, "the abort stopped the pool");
    assert.equal(stats.inFlight, 0);
  });

  it("throws the source's error after the items in flight finish", async () => {
    let finished = 0;
    async function* source() {
      yield 1;
      yield 2;
      throw new Error("load failed at task 3");
    }
    await assert.rejects(
      runPool<number, number>({
        source: source(),
        concurrency: 2,
        signal: new AbortController().signal,
        run: async (i) => {
          await new Promise((r) => setTimeout(r, 10));
          return i;
        },
        onResult: () => finished++,
      }),
      /load failed at task 3/,
    );
    assert.equal(finished, 2);
  });
});
