/**
 * Running a step under a deadline and a cancellation signal.
 *
 * Every stage of every rollout runs under {@link withDeadline} with the run's signal as
 * parent, so listening to a parent is shared ({@link onAbort}): a signal has one abort
 * listener while anything listens through it (removed when the last one stops), and each
 * listener is an entry in that listener's set rather than a listener of its own.
 *
 * @module
 */

/** Raised by {@link withDeadline} when the time ran out. */
export class DeadlineExceeded extends Error {
  /** The budget that ran out, in seconds. */
  readonly seconds: number;
  constructor(seconds: number) {
    super(`deadline of ${seconds}s exceeded`);
    this.name = "DeadlineExceeded";
    this.seconds = seconds;
  }
}

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

/**
 * Runs `fn` with a signal that aborts when `seconds` pass (null = no limit) or `parent`
 * aborts. Rejects with {@link DeadlineExceeded} on expiry even if `fn` ignores its signal,
 * and with the parent's abort reason when the parent aborts first. When `parent` is
 * already aborted, `fn` still runs (with an aborted signal); only a result it had already
 * settled when it returned wins over the cancellation.
 */
export function withDeadline<T>(
  seconds: number | null,
  parent: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const ctrl = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let leaveParent: (() => void) | null = null;
    let settled = false;
    const finish = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      leaveParent?.();
      return true;
    };
    const fail = (reason: unknown) => {
      if (finish()) reject(reason);
    };
    const alreadyAborted = parent.aborted;
    if (alreadyAborted) ctrl.abort(parent.reason);
    else {
      leaveParent = onAbort(parent, (reason) => {
        ctrl.abort(reason);
        fail(ctrl.signal.reason);
      });
    }
    if (seconds !== null && !alreadyAborted) {
      timer = setTimeout(() => {
        const err = new DeadlineExceeded(seconds);
        ctrl.abort(err);
        fail(err);
      }, Math.max(0, seconds * 1000));
    }
    let work: Promise<T>;
    try {
      work = fn(ctrl.signal);
    } catch (err) {
      fail(err);
      return;
    }
    Promise.resolve(work).then((value) => {
      if (finish()) resolve(value);
    }, fail);
    // queued after the work's own settlement if fn returned it already settled
    if (alreadyAborted) queueMicrotask(() => fail(ctrl.signal.reason));
  });
}

/** Epoch seconds, as traces record time. */
export function nowSeconds(): number {
  return Date.now() / 1000;
}
