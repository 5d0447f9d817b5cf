/**
 * Keeping the event loop turning under work that never waits on I/O. A rollout answered
 * in-process (the oracle, a harness and judges with no command or socket) is a chain of
 * promise reactions; a pool of them, or one harness looping over in-process calls, refills
 * the microtask queue as fast as it drains, so the event loop never gets to its timers,
 * signals and I/O callbacks until the work ends: Ctrl-C waited for the last rollout, the
 * heap was never checked (lib/run/heap_trim.ts), the progress display froze. Callers
 * between two pieces of such work ask {@link loopTurns} whether the loop has gone
 * {@link TURN_MS} without a turn and, if so, wait for one.
 *
 * @module
 */
import { setImmediate } from "node:timers";

/** The longest the event loop may go without a turn while work runs, in milliseconds. */
export const TURN_MS = 50;

/** When the event loop last turned, as the callers of one instance see it. */
export class LoopTurns {
  #lastTurn = performance.now();
  #turn: Promise<void> | null = null;

  /** True when the loop has not turned for {@link TURN_MS}, as far as this instance knows. */
  due(): boolean {
    return performance.now() - this.#lastTurn >= TURN_MS;
  }

  /**
   * Resolves after the event loop's next turn (its timers, signals and I/O callbacks run
   * first); every caller that asks while one is pending waits for the same turn.
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

  /** `work()`, started after a turn of the loop when one is {@link due}. */
  whenTurned<T>(work: () => Promise<T>): Promise<T> {
    return this.due() ? this.turn().then(work) : work();
  }
}

/** The process's one view of the loop: the run's pool and the in-process transports share it. */
export const loopTurns: LoopTurns = new LoopTurns();
