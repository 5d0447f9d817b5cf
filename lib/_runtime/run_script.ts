/**
 * What `vf run` needs from the host runtime: on Bun (and in its single-file binary),
 * virtual modules, so that a script's bare imports resolve to modules already loaded in
 * this process; on Deno, a child `deno run` of the script with a config or import map.
 *
 * @module
 */
import { spawn } from "node:child_process";
import process from "node:process";
import { execPath } from "./is_compiled.ts";

/** Bun's runtime plugin API, as far as virtual modules go. */
interface BunPlugins {
  plugin(plugin: {
    name: string;
    setup(build: {
      module(
        specifier: string,
        load: () => { exports: Record<string, unknown>; loader: "object" },
      ): void;
    }): void;
  }): void;
}

/**
 * Makes each specifier resolve, for every module imported from now on in this process,
 * to the given module's exports (Bun only).
 */
export function installVirtualModules(modules: Record<string, Record<string, unknown>>): void {
  const bun = (globalThis as { Bun?: BunPlugins }).Bun;
  if (!bun) throw new Error("virtual modules need Bun");
  bun.plugin({
    name: "vf-run-self",
    setup(build) {
      for (const [specifier, exports] of Object.entries(modules)) {
        build.module(specifier, () => ({ exports: { ...exports }, loader: "object" }));
      }
    },
  });
}

/**
 * Runs `deno run -A <flags> <script> <args>` with this Deno, stdio inherited; resolves to
 * its exit code (128 + n when a signal ended it).
 */
export function runDenoChild(flags: string[], script: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(execPath(), ["run", "-A", ...flags, script, ...args], {
      stdio: "inherit",
      env: process.env,
    });
    const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
    const onInt = forward("SIGINT");
    const onTerm = forward("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      const n = signal
        ? ({ SIGINT: 2, SIGTERM: 15, SIGKILL: 9 } as Record<string, number>)[signal]
        : 0;
      resolve(code ?? 128 + (n ?? 1));
    });
  });
}
