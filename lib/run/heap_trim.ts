/**
 * Keeps a long run's memory near what it holds live. The runner retains nothing per
 * rollout (the live heap after a full collection is the same after 2,000 or 20,000
 * rollouts), but the engines' collectors let the heap, and with it the process, grow with
 * a long run's allocation before collecting it fully. A full collection when the heap has
 * grown holds the peak instead (bench/memory_growth.ts shows both).
 *
 * The rule, checked every {@link CHECK_MS} ms: collect fully when the heap in use (cheap
 * to read) has reached {@link GROWTH_FACTOR} times the live heap measured after the last
 * full collection, and at least {@link FLOOR_BYTES}, so that a short run, whose heap stays
 * below that, never collects; a long run collects each time its garbage has caught up with
 * what it holds live, not on a clock. A safety net caps the cost near 10% of the
 * process's own CPU time: after a collection, the next one waits until the process has
 * spent {@link COST_FACTOR} times the CPU time that one took (CPU, not wall time, so that a
 * loaded machine, which stretches the wall, does not make collections relatively dearer).
 *
 * @module
 */
import process from "node:process";
import { collectGarbage } from "../../kit/_runtime/gc.ts";
import { runtimeName } from "../../kit/_runtime/runtime_name.ts";

/**
 * How often the heap is checked, in milliseconds: 100 under Bun, 250 elsewhere. A run
 * allocates between two checks, so the heap overshoots the rule's mark by what it allocates
 * in that time: Bun needs the finer interval to hold its peak, while under Deno, whose young
 * generation the `vf` launchers cap, it only adds collections (bench/memory.ts; the figures
 * are in docs/performance.md).
 */
const CHECK_MS = runtimeName() === "bun" ? 100 : 250;
/** The heap in use that calls for a collection, as a multiple of the last live heap. */
export const GROWTH_FACTOR = 2;
/** The heap in use below which no collection is made, in bytes. */
export const FLOOR_BYTES = 24 * 1024 * 1024;
/** The CPU time spent between two collections, at least, as a multiple of the last one's. */
export const COST_FACTOR = 10;

/** CPU time (user + system) of this process so far, in milliseconds. */
function cpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/** Bytes of JS heap in use now (live objects and garbage not yet collected). */
function heapUsedBytes(): number {
  return process.memoryUsage().heapUsed;
}

/** What the rule knows between two checks. */
export interface HeapTrimState {
  /** The heap in use right after the last full collection (0 before the first). */
  liveBytes: number;
  /** The process CPU time before which no collection is made (the cost cap). */
  notBeforeCpuMs: number;
}

/** True when the rule calls for a full collection now. */
export function shouldCollect(state: HeapTrimState, usedBytes: number, nowCpuMs: number): boolean {
  return usedBytes >= Math.max(FLOOR_BYTES, state.liveBytes * GROWTH_FACTOR) &&
    nowCpuMs >= state.notBeforeCpuMs;
}

/** The state after a collection that ran from `beforeCpuMs` to `afterCpuMs` and left `liveBytes`. */
export function afterCollection(
  liveBytes: number,
  beforeCpuMs: number,
  afterCpuMs: number,
): HeapTrimState {
  return { liveBytes, notBeforeCpuMs: afterCpuMs + (afterCpuMs - beforeCpuMs) * COST_FACTOR };
}

/** What {@link startHeapTrim} can be told; the engine's own probes unless given (tests). */
export interface HeapTrimOptions {
  /**
   * Called once, when the rule first calls for a collection the engine does not let code
   * make (Deno started without `--v8-flags=--expose-gc`); checking stops there.
   */
  onUncollectable?: () => void;
  /** Makes a full collection; false when the engine offers none ({@link collectGarbage}). */
  collect?: () => boolean;
  /** Bytes of heap in use now. */
  heapUsed?: () => number;
  /** Milliseconds between checks (default {@link CHECK_MS}). */
  checkMs?: number;
}

/**
 * Starts checking the heap and collecting when the rule says so (when the engine lets
 * code collect); returns the stop function. The timer never keeps the process alive.
 */
export function startHeapTrim(options: HeapTrimOptions = {}): () => void {
  const collect = options.collect ?? collectGarbage;
  const heapUsed = options.heapUsed ?? heapUsedBytes;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let state: HeapTrimState = { liveBytes: 0, notBeforeCpuMs: 0 };
  const schedule = () => {
    timer = setTimeout(tick, options.checkMs ?? CHECK_MS);
    (timer as { unref?: () => void }).unref?.();
  };
  const tick = () => {
    if (stopped) return;
    const before = cpuMs();
    if (shouldCollect(state, heapUsed(), before)) {
      if (!collect()) return void options.onUncollectable?.(); // no collection offered to code
      state = afterCollection(heapUsed(), before, cpuMs());
    }
    schedule();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
