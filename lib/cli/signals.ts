/**
 * SIGINT / SIGTERM handling of a run, over `node:process` (the same on Deno, Bun and
 * Node): while installed, the signals no longer kill the process; the handler decides.
 *
 * @module
 */
import process from "node:process";

/** The signals a run handles. */
export type StopSignal = "SIGINT" | "SIGTERM";

/**
 * Calls `handler(signal, n)` for each SIGINT or SIGTERM (`n` counts them from 1). Returns
 * a function that uninstalls the handlers.
 */
export function onStopSignals(handler: (signal: StopSignal, count: number) => void): () => void {
  let count = 0;
  const on = (signal: StopSignal) => () => handler(signal, ++count);
  const int = on("SIGINT");
  const term = on("SIGTERM");
  process.on("SIGINT", int);
  process.on("SIGTERM", term);
  return () => {
    process.off("SIGINT", int);
    process.off("SIGTERM", term);
  };
}
