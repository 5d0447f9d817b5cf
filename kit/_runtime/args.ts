import process from "node:process";

/** The command-line arguments after the program (and script) name. */
export function getArgs(): string[] {
  const deno = (globalThis as { Deno?: { args: string[] } }).Deno;
  if (deno) return [...deno.args];
  return process.argv.slice(2);
}
