/**
 * Waiting with cancellation.
 *
 * @module
 */

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Resolves after `ms`, or at once when `signal` aborts (a backoff that a cancel cuts short). */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, signal).catch(() => {});
}
