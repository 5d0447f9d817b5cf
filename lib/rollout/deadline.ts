/**
 * Running a step under a deadline and a cancellation signal.
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

/**
 * Runs `fn` with a signal that aborts when `seconds` pass (null = no limit) or `parent`
 * aborts. Rejects with {@link DeadlineExceeded} on expiry even if `fn` ignores its signal.
 */
export async function withDeadline<T>(
  seconds: number | null,
  parent: AbortSignal,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ctrl = new AbortController();
  const onParent = () => ctrl.abort(parent.reason);
  if (parent.aborted) ctrl.abort(parent.reason);
  else parent.addEventListener("abort", onParent, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<never>((_, reject) => {
    if (seconds === null) return;
    timer = setTimeout(() => {
      const err = new DeadlineExceeded(seconds);
      ctrl.abort(err);
      reject(err);
    }, Math.max(0, seconds * 1000));
  });
  const cancelled = new Promise<never>((_, reject) => {
    if (ctrl.signal.aborted) reject(ctrl.signal.reason);
    else ctrl.signal.addEventListener("abort", () => reject(ctrl.signal.reason), { once: true });
  });
  const work = fn(ctrl.signal);
  try {
    return await Promise.race([work, expiry, cancelled]);
  } finally {
    clearTimeout(timer);
    parent.removeEventListener("abort", onParent);
    work.catch(() => {});
    expiry.catch(() => {});
    cancelled.catch(() => {});
  }
}

/** Epoch seconds, as traces record time. */
export function nowSeconds(): number {
  return Date.now() / 1000;
}
