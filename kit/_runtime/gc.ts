/**
 * A full garbage collection asked for from code: Bun always offers it (`Bun.gc`); Deno
 * (and Node) only when started with `--expose-gc` (the `vf` deno tasks and `bin/vf.js`
 * pass `--v8-flags=--expose-gc`).
 *
 * @module
 */

/** Runs a full, synchronous collection; false when this engine offers none to code. */
export function collectGarbage(): boolean {
  const g = globalThis as { Bun?: { gc(force: boolean): void }; gc?: () => void };
  if (g.Bun) {
    // (Bun.shrink() as well returns more pages, but throws away compiled code: the run
    // then took 2.4 times the CPU in bench/memory_growth.ts)
    g.Bun.gc(true);
    return true;
  }
  if (typeof g.gc === "function") {
    g.gc();
    return true;
  }
  return false;
}
