/**
 * Running a step under a deadline and a cancellation signal.
 *
 * Every stage of every rollout runs under {@link withDeadline} with the run's signal as
 * parent, so listening to a parent is shared (`onAbort`, kit/util/on_abort.ts): a signal
 * has one abort listener while anything listens through it.
 *
 * @module
 */
import { onAbort } from "../../kit/util/on_abort.ts";

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
