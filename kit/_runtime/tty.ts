import { denoHost, nodeProcess, writeAllSync } from "./host.ts";

/** True when stderr is an interactive terminal. */
export function stderrIsTerminal(): boolean {
  const deno = denoHost();
  if (deno) return deno.stderr.isTerminal();
  return Boolean((nodeProcess().stderr as { isTTY?: boolean }).isTTY);
}

/** Writes text to stderr without a trailing newline. */
export function writeStderr(text: string): void {
  const deno = denoHost();
  if (deno) writeAllSync(deno.stderr, text);
  else nodeProcess().stderr.write(text);
}

/** Writes text to stdout without a trailing newline. */
export function writeStdout(text: string): void {
  const deno = denoHost();
  if (deno) writeAllSync(deno.stdout, text);
  else nodeProcess().stdout.write(text);
}
