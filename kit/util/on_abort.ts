/**
 * Listening to an abort signal through one shared listener: a signal that many waiters
 * watch at once (a run's signal, under every stage of every rollout in flight) has one
 * abort listener while anything listens through it (removed when the last one stops), and
 * each waiter is an entry in that listener's set rather than a listener of its own.
 *
 * @module
 */

/** What listens to one signal through {@link onAbort}, and the signal's one listener. */
interface Listeners {
  calls: Set<(reason: unknown) => void>;
  forward: () => void;
}

const listenersOf = new WeakMap<AbortSignal, Listeners>();

/**
 * Calls `listener(signal.reason)` once when `signal` aborts, unless the returned removal
 * was called first. Listeners are called in the order they were added; the signal has
 * one abort listener for all of them while any is left.
 */
export function onAbort(signal: AbortSignal, listener: (reason: unknown) => void): () => void {
  let entry = listenersOf.get(signal);
  if (entry === undefined) {
    const calls = new Set<(reason: unknown) => void>();
    const forward = () => {
      listenersOf.delete(signal);
      const due = [...calls];
      calls.clear();
      for (const call of due) {
        try {
          call(signal.reason);
        } catch (err) {
          // as an event listener's: reported, and the other listeners still called
          queueMicrotask(() => {
            throw err;
          });
        }
      }
    };
    entry = { calls, forward };
    listenersOf.set(signal, entry);
    signal.addEventListener("abort", forward, { once: true });
  }
  const { calls, forward } = entry;
  const call = (reason: unknown) => listener(reason); // each addition is its own entry
  calls.add(call);
  return () => {
    if (!calls.delete(call) || calls.size > 0) return;
    listenersOf.delete(signal);
    signal.removeEventListener("abort", forward);
  };
}
