/**
 * A full garbage collection asked for from code: Bun always offers it (JavaScriptCore's
 * `fullGC` from `bun:jsc`); Deno (and Node) only when started with `--expose-gc` (the `vf`
 * deno tasks and `bin/vf.js` pass `--v8-flags=--expose-gc`).
 *
 * @module
 */

/** A synchronous full collection. */
type FullGc = () => void;

/** Bun's collector once looked up ({@link bunCollector}); null off Bun. */
let bunFullGc: FullGc | null | undefined;

/**
 * `fullGC` of `bun:jsc`, looked up once. `Bun.gc(true)` makes the same collection and then
 * asks mimalloc to return free pages, which holds the JavaScript thread about twice as long
 * for the same peak RSS; `Bun.shrink()` returns more pages but throws away compiled code
 * (figures in docs/performance.md).
 */
function bunCollector(): FullGc | null {
  if (bunFullGc !== undefined) return bunFullGc;
  const g = globalThis as { Bun?: { gc(force: boolean): void } };
  if (!g.Bun) return bunFullGc = null;
  const require = (import.meta as unknown as { require?: (id: string) => unknown }).require;
  const jsc = require?.("bun:jsc") as { fullGC?: FullGc } | undefined;
  const bun = g.Bun;
  return bunFullGc = jsc?.fullGC ?? (() => bun.gc(true));
}

/** Runs a full, synchronous collection; false when this engine offers none to code. */
export function collectGarbage(): boolean {
  const bun = bunCollector();
  if (bun !== null) {
    bun();
    return true;
  }
  const g = globalThis as { gc?: () => void };
  if (typeof g.gc === "function") {
    g.gc();
    return true;
  }
  return false;
}
