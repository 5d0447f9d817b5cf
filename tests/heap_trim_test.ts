import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  afterCollection,
  COST_FACTOR,
  FLOOR_BYTES,
  GROWTH_FACTOR,
  type HeapTrimState,
  shouldCollect,
  startHeapTrim,
} from "../lib/run/heap_trim.ts";

const MB = 1024 * 1024;
const fresh: HeapTrimState = { liveBytes: 0, notBeforeCpuMs: 0 };

describe("heap trim rule", () => {
  it("never collects below the floor, however long the run", () => {
    for (const cpu of [0, 1_000, 1_000_000]) {
      assert.equal(shouldCollect(fresh, FLOOR_BYTES - 1, cpu), false);
      assert.equal(
        shouldCollect({ liveBytes: 1 * MB, notBeforeCpuMs: 0 }, FLOOR_BYTES - 1, cpu),
        false,
      );
    }
    assert.equal(shouldCollect(fresh, FLOOR_BYTES, 0), true);
  });

  it("collects once the heap in use has grown to GROWTH_FACTOR times the last live heap", () => {
    const live = FLOOR_BYTES; // a live heap at the floor: growth decides
    const state: HeapTrimState = { liveBytes: live, notBeforeCpuMs: 0 };
    assert.equal(shouldCollect(state, live * GROWTH_FACTOR - 1, 10_000), false);
    assert.equal(shouldCollect(state, live * GROWTH_FACTOR, 10_000), true);
    assert.ok(GROWTH_FACTOR > 1);
  });

  it("waits COST_FACTOR times a collection's CPU time before the next, whatever the heap", () => {
    const state = afterCollection(10 * MB, 2_000, 2_030);
    assert.deepEqual(state, { liveBytes: 10 * MB, notBeforeCpuMs: 2_030 + 30 * COST_FACTOR });
    const huge = 100 * FLOOR_BYTES;
    assert.equal(shouldCollect(state, huge, state.notBeforeCpuMs - 1), false);
    assert.equal(shouldCollect(state, huge, state.notBeforeCpuMs), true);
  });

  /**
   * Runs the trim on a heap always past the floor, with `collect` standing for the engine,
   * checking every 2 ms; resolves when `until` holds (or after 5 s) and 30 ms (a dozen
   * checks) more, with how often the run was told it cannot collect and how often it asked.
   */
  async function trimWith(collect: boolean, until: (asked: number, told: number) => boolean) {
    let told = 0;
    let asked = 0;
    const stop = startHeapTrim({
      collect: () => (asked++, collect),
      heapUsed: () => 2 * FLOOR_BYTES,
      checkMs: 2,
      onUncollectable: () => told++,
    });
    try {
      const deadline = Date.now() + 5_000;
      while (!until(asked, told) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise((r) => setTimeout(r, 30));
      return { told, asked };
    } finally {
      stop();
    }
  }

  it("says once, and stops checking, when the engine lets no code collect", async () => {
    const { told, asked } = await trimWith(false, (_, told) => told > 0);
    assert.equal(told, 1);
    assert.equal(asked, 1);
  });

  it("collects, and says nothing, when the engine lets code collect", async () => {
    const { told, asked } = await trimWith(true, (asked) => asked > 0);
    assert.equal(asked, 1); // the heap stays at the live heap it measured: no second one
    assert.equal(told, 0);
  });

  it("starts and stops without keeping the process alive", () => {
    const stop = startHeapTrim();
    stop();
    stop(); // idempotent
  });
});
