import { denoHost, nodeProcess } from "./host.ts";

/**
 * True inside a single-file binary (`deno compile` or `bun build --compile`), where
 * `import()` of a module that was not embedded at build time is not possible.
 */
export function isCompiled(): boolean {
  const g = globalThis as {
    Deno?: { build?: { standalone?: boolean } };
    Bun?: { main?: string };
  };
  if (g.Deno?.build?.standalone === true) return true;
  if (g.Bun) {
    const main = g.Bun.main ?? "";
    return main.startsWith("/$bunfs/") || main.startsWith("B:/~BUN/");
  }
  return false;
}

/** The path of the running executable (the binary itself when compiled). */
export function execPath(): string {
  const deno = denoHost();
  if (deno) return deno.execPath();
  return nodeProcess().execPath;
}
