/**
 * Joining abort signals.
 *
 * @module
 */

/**
 * One abort signal that fires when any of `signals` does, with that signal's reason
 * (`undefined` entries are skipped; a single signal is returned as is).
 */
export function anySignal(signals: (AbortSignal | undefined)[]): AbortSignal {
  const live = signals.filter((s): s is AbortSignal => s !== undefined);
  if (live.length === 1 && live[0]) return live[0];
  const ctl = new AbortController();
  for (const s of live) {
    if (s.aborted) {
      ctl.abort(s.reason);
      break;
    }
    s.addEventListener("abort", () => ctl.abort(s.reason), { once: true });
  }
  return ctl.signal;
}
