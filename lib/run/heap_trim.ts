/**
 * Keeps a long run's memory near what it holds live. The runner retains nothing per
 * rollout (the live heap after a full collection is the same after 2,000 or 20,000
 * rollouts), but the engines' collectors let the heap, and with it the process, grow with
 * a long run's allocation before collecting it fully. A full collection now and then
 * holds the peak instead (bench/memory_growth.ts shows both). Its cost is kept near 10% of
 * the process's own CPU time: after a collection, the next one waits until the process
 * has spent 10 times the CPU time that one took (CPU, not wall time, so that a loaded
 * machine, which stretches the wall, does not make collections relatively dearer).
 *
 * @module
 */
import process from "node:process";
import { collectGarbage } from "../../kit/_runtime/gc.ts";

/** How often the CPU time spent is checked, in milliseconds. */
const CHECK_MS = 250;
/** The CPU time spent between two collections, as a multiple of the last one's. */
const COST_FACTOR = 10;
/** The CPU time spent before the first collection, in milliseconds. */
const FIRST_AFTER_CPU_MS = 500;

/** CPU time (user + system) of this process so far, in milliseconds. */
function cpuMs(): number {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
}

/**
 * Starts collecting now and then (when the engine lets code collect); returns the stop
 * function. The timer never keeps the process alive.
 */
export function startHeapTrim(): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  let nextAtCpuMs = cpuMs() + FIRST_AFTER_CPU_MS;
  const schedule = () => {
    timer = setTimeout(tick, CHECK_MS);
    (timer as { unref?: () => void }).unref?.();
  };
  const tick = () => {
    if (stopped) return;
    const before = cpuMs();
    if (before >= nextAtCpuMs) {
      if (!collectGarbage()) return; // this engine offers no collection to code
      const after = cpuMs();
      nextAtCpuMs = after + (after - before) * COST_FACTOR;
    }
    schedule();
  };
  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
