/**
 * Keeping the event loop turning under a run that never waits on I/O. A rollout answered
 * in-process (the oracle, a harness and judges with no command or socket) is a chain of
 * promise reactions; a pool of them refills the microtask queue as fast as it drains, so
 * the event loop never gets to its timers, signals and I/O callbacks until the run ends:
 * Ctrl-C waited for the last rollout, the heap was never checked (lib/run/heap_trim.ts),
 * the progress display froze. {@link LoopTurns} lets the pool's workers notice that the
 * loop has not turned for {@link TURN_MS} and wait, between two items, for one turn.
 *
 * @module
 */
import { setImmediate } from "node:timers";

/** The longest the event loop may go without a turn while items run, in milliseconds. */
export const TURN_MS = 50;

/** When the event loop last turned, as the workers of one pool see it. */
export class LoopTurns {
  #lastTurn = performance.now();
  #turn: Promise<void> | null = null;

  /** True when the loop has not turned for {@link TURN_MS}, as far as this pool knows. */
  due(): boolean {
    return performance.now() - this.#lastTurn >= TURN_MS;
  }

  /**
   * Resolves after the event loop's next turn (its timers, signals and I/O callbacks run
   * first); every worker that asks while one is pending waits for the same turn.
   */
  turn(): Promise<void> {
    this.#turn ??= new Promise<void>((resolve) =>
      setImmediate(() => {
        this.#turn = null;
        this.#lastTurn = performance.now();
        resolve();
      })
    );
    return this.#turn;
  }
}
