import { denoHost, nodeProcess } from "./host.ts";

/** The command-line arguments after the program (and script) name. */
export function getArgs(): string[] {
  const deno = denoHost();
  if (deno) return [...deno.args];
  return nodeProcess().argv.slice(2);
}
