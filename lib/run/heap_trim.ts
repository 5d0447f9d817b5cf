/**
 * Keeps a long run's memory near what it holds live. The runner retains nothing per
 * rollout (the live heap after a full collection is the same after 2,000 or 20,000
 * rollouts), but the engines' collectors let the heap, and with it the process, grow with
 * a long run's allocation before collecting it fully. A full collection at intervals
 * holds the peak instead (bench/memory_growth.ts shows both). Its cost is kept near 2%
 * of the run: the next collection waits at least 50 times the CPU time the last one took
 * (CPU, not wall time, so that a loaded machine does not stretch the interval), and
 * never less than a quarter of a second.
 *
 * @module
 */
import process from "node:process";
import { collectGarbage } from "../../kit/_runtime/gc.ts";

/** The shortest wait between two collections, in milliseconds. */
const MIN_INTERVAL_MS = 250;
/** The wait after a collection, as a multiple of the CPU time it took. */
const COST_FACTOR = 50;

/**
 * Starts collecting at intervals (when the engine lets code collect); returns the stop
 * function. The timer never keeps the process alive.
 */
export function startHeapTrim(): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const schedule = (ms: number) => {
    timer = setTimeout(tick, ms);
    (timer as { unref?: () => void }).unref?.();
  };
  const tick = () => {
    if (stopped) return;
    const before = process.cpuUsage();
    if (!collectGarbage()) return; // this engine offers no collection to code
    const spent = process.cpuUsage(before);
    const cpuMs = (spent.user + spent.system) / 1000;
    schedule(Math.max(MIN_INTERVAL_MS, cpuMs * COST_FACTOR));
  };
  schedule(MIN_INTERVAL_MS);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
