import { denoHost, nodeProcess } from "./host.ts";

/** Ends the process with `code`. Only `cli.ts` calls this. */
export function exit(code: number): never {
  const deno = denoHost();
  if (deno) deno.exit(code);
  return nodeProcess().exit(code);
}
