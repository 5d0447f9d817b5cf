/**
 * The host runtime's own process API, reached without importing `node:process`: Deno's
 * `Deno` namespace on Deno, the global `process` on Bun and Node. On Deno, the first
 * `node:` module a process imports (or the first touch of the global `process`) loads
 * Node's compatibility layer, which slows every start (docs/performance.md); the modules
 * every command loads at start reach the process through this one instead.
 *
 * @module
 */

/** The part of Deno's namespace the start-up modules use. */
export interface DenoHost {
  args: string[];
  execPath(): string;
  exit(code: number): never;
  env: { get(name: string): string | undefined; toObject(): Record<string, string> };
  stdout: DenoOutput;
  stderr: DenoOutput;
  build?: { standalone?: boolean };
}

/** Deno's stdout or stderr. */
export interface DenoOutput {
  writeSync(bytes: Uint8Array): number;
  isTerminal(): boolean;
}

/** Deno's namespace when running on Deno, else undefined. */
export function denoHost(): DenoHost | undefined {
  return (globalThis as { Deno?: DenoHost }).Deno;
}

/** Node's `process` (Bun and Node have it as a global; not for use on Deno). */
export function nodeProcess(): NodeJS.Process {
  return (globalThis as unknown as { process: NodeJS.Process }).process;
}

const encoder = new TextEncoder();

/**
 * Writes all of `text` to Deno's stdout or stderr now (a pipe that is full blocks, as
 * Deno's own `process.stdout.write` does); a closed reader is ignored.
 */
export function writeAllSync(output: DenoOutput, text: string): void {
  let bytes = encoder.encode(text);
  try {
    while (bytes.length > 0) bytes = bytes.subarray(output.writeSync(bytes));
  } catch {
    // the reader is gone (EPIPE): nothing more can be shown there
  }
}
