/**
 * Terminal output of the CLI: data to stdout, logs and progress to stderr, colour
 * only on a terminal and never with `NO_COLOR` or `--no-color`.
 *
 * @module
 */
import { getEnv } from "../../kit/_runtime/env.ts";
import { denoHost, nodeProcess, writeAllSync } from "../../kit/_runtime/host.ts";
import { stderrIsTerminal } from "../../kit/_runtime/tty.ts";
import { redact } from "../../kit/secrets.ts";

let colorOff = false;

/** Turns colour off for the rest of the process (`--no-color`). */
export function disableColor(): void {
  colorOff = true;
}

/** True when stderr output may use ANSI colours. */
export function useColor(): boolean {
  return !colorOff && getEnv("NO_COLOR") === undefined && stderrIsTerminal();
}

/** Wraps text in an ANSI colour when colours are on. */
export function paint(text: string, code: "red" | "yellow" | "green" | "dim" | "bold"): string {
  if (!useColor()) return text;
  const codes = { red: 31, yellow: 33, green: 32, dim: 2, bold: 1 } as const;
  return `\x1b[${codes[code]}m${text}\x1b[0m`;
}

/**
 * Writes text and resolves once the stream took it: on `drain`, or at once when the
 * reader is gone (closed pipe, EPIPE) — a closed stdout must never keep the process alive.
 * On Deno the text is written at once, as Deno's `process.stdout.write` does.
 */
function write(name: "stdout" | "stderr", text: string): Promise<void> {
  const deno = denoHost();
  if (deno) {
    if (text !== "") writeAllSync(deno[name], redact(text));
    return Promise.resolve();
  }
  const stream = nodeProcess()[name];
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableEnded) return resolve();
    const done = () => {
      stream.off("drain", done);
      stream.off("error", done);
      stream.off("close", done);
      resolve();
    };
    try {
      if (stream.write(redact(text))) return resolve();
    } catch {
      return resolve();
    }
    stream.once("drain", done);
    stream.once("error", done);
    stream.once("close", done);
  });
}

/** Writes a line of data to stdout. */
export function out(text: string): Promise<void> {
  return write("stdout", text.endsWith("\n") ? text : text + "\n");
}

/** Writes a line of log or progress to stderr. */
export function err(text: string): Promise<void> {
  return write("stderr", text.endsWith("\n") ? text : text + "\n");
}

/** Waits until both standard streams have flushed what was written. */
export function flushOutput(): Promise<void> {
  return Promise.all([write("stdout", ""), write("stderr", "")]).then(() => {});
}
