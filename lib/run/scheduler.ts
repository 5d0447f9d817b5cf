/**
 * The streaming scheduler: `concurrency` workers pull work items one at a time from a
 * lazy source, run them, and hand each result on as soon as it is done. Nothing is
 * collected: memory holds at most `concurrency` items in flight, whatever the length of
 * the source. Aborting the signal stops pulling new items; items in flight finish (their
 * own code sees the same signal and winds down). While a pool runs, its heap is collected
 * at intervals (lib/run/heap_trim.ts), so a long run's memory stays near what it holds, and
 * the event loop keeps turning even when no item waits on I/O (kit/util/loop_turn.ts).
 *
 * @module
 */
import { startHeapTrim } from "./heap_trim.ts";
import { loopTurns as turns } from "../../kit/util/loop_turn.ts";

/** Live counters of a pool. */
export interface PoolStats {
  /** Items pulled from the source. */
  pulled: number;
  /** Items running now. */
  inFlight: number;
  /** The most items ever running at once. */
  maxInFlight: number;
  /** Items whose result was handed on. */
  finished: number;
}

/** Options of {@link runPool}. */
export interface PoolOptions<S, R> {
  /** The work, pulled lazily (an async generator is fine: concurrent pulls queue). */
  source: AsyncIterator<S>;
  concurrency: number;
  /** Stops pulling when aborted. */
  signal: AbortSignal;
  /** Runs one item. */
  run(item: S): Promise<R>;
  /** Receives each result as soon as it is done (synchronous: results are not queued). */
  onResult(result: R, item: S): void;
  /** Counters, updated in place. */
  stats?: PoolStats;
  /** Told once when the heap should be collected and the engine lets no code do it. */
  onHeapUncollectable?: () => void;
}

/** A fresh set of counters. */
export function newPoolStats(): PoolStats {
  return { pulled: 0, inFlight: 0, maxInFlight: 0, finished: 0 };
}

/**
 * Runs every item of `source` with at most `concurrency` in flight. Resolves when the
 * source is exhausted (or the signal aborted) and every started item is done. If the
 * source, `run` or `onResult` throws, no new item starts, the items in flight finish, and
 * the first error is thrown.
 */
export async function runPool<S, R>(options: PoolOptions<S, R>): Promise<void> {
  const stats = options.stats ?? newPoolStats();
  let failure: { error: unknown } | null = null;
  let exhausted = false;
  const stopped = () => exhausted || failure !== null || options.signal.aborted;

  const worker = async () => {
    while (!stopped()) {
      // between two items: let a loop starved by in-process rollouts turn (kit/util/loop_turn.ts)
      if (turns.due()) {
        await turns.turn();
        if (stopped()) return;
      }
      let next: IteratorResult<S>;
      try {
        next = await options.source.next();
      } catch (error) {
        failure ??= { error };
        return;
      }
      if (next.done) {
        exhausted = true;
        return;
      }
      stats.pulled++;
      if (stopped()) return; // pulled while stopping: never started
      stats.inFlight++;
      if (stats.inFlight > stats.maxInFlight) stats.maxInFlight = stats.inFlight;
      let result: R;
      try {
        result = await options.run(next.value);
      } catch (error) {
        failure ??= { error };
        return;
      } finally {
        stats.inFlight--;
      }
      stats.finished++;
      try {
        options.onResult(result, next.value);
      } catch (error) {
        failure ??= { error };
        return;
      }
    }
  };

  const n = Math.max(1, Math.floor(options.concurrency));
  const stopTrim = startHeapTrim(
    options.onHeapUncollectable ? { onUncollectable: options.onHeapUncollectable } : {},
  );
  try {
    await Promise.all(Array.from({ length: n }, worker));
  } finally {
    stopTrim();
  }
  if (failure !== null) throw (failure as { error: unknown }).error;
}
