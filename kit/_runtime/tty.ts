import process from "node:process";

/** True when stderr is an interactive terminal. */
export function stderrIsTerminal(): boolean {
  return Boolean((process.stderr as { isTTY?: boolean }).isTTY);
}

/** Writes text to stderr without a trailing newline. */
export function writeStderr(text: string): void {
  process.stderr.write(text);
}

/** Writes text to stdout without a trailing newline. */
export function writeStdout(text: string): void {
  process.stdout.write(text);
}
