import process from "node:process";

/** Ends the process with `code`. Only `cli.ts` calls this. */
export function exit(code: number): never {
  const deno = (globalThis as { Deno?: { exit(code: number): never } }).Deno;
  if (deno) deno.exit(code);
  process.exit(code);
}
