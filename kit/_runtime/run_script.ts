/**
 * What `vf run` needs from the host runtime: on Bun (and in its single-file binary),
 * virtual modules and import renaming, so that a script's imports resolve to modules
 * already loaded in this process; on Deno, a child `deno run` (or `deno test`) of the
 * script with a config or an import map.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import process from "node:process";
import { execPath } from "./is_compiled.ts";

/** Bun's runtime plugin API, as far as virtual modules and source loading go. */
interface BunPlugins {
  plugin(plugin: {
    name: string;
    setup(build: {
      module(
        specifier: string,
        load: () => { exports: Record<string, unknown>; loader: "object" },
      ): void;
      onLoad(
        options: { filter: RegExp },
        load: (args: { path: string }) => { contents: string; loader: string },
      ): void;
    }): void;
  }): void;
}

function bunPlugins(): BunPlugins {
  const bun = (globalThis as { Bun?: BunPlugins }).Bun;
  if (!bun) throw new Error("runtime plugins need Bun");
  return bun;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Makes each specifier resolve, for every module imported from now on in this process,
 * to the given module's exports (Bun only).
 */
export function installVirtualModules(modules: Record<string, Record<string, unknown>>): void {
  bunPlugins().plugin({
    name: "vf-run-self",
    setup(build) {
      for (const [specifier, exports] of Object.entries(modules)) {
        build.module(specifier, () => ({ exports: { ...exports }, loader: "object" }));
      }
    },
  });
}

/**
 * Rewrites import specifiers in the source files under `dir` (outside `node_modules`)
 * as Bun loads them: each key of `renames` becomes its value. Lets a builtin module that
 * cannot be replaced (`node:test`) be swapped for a virtual one (Bun only).
 */
export function renameImportsUnder(dir: string, renames: Record<string, string>): void {
  const base = escapeRegExp(dir.replace(/\/$/, ""));
  const filter = new RegExp(`^${base}/(?!(?:.*/)?node_modules/).*\\.(?:[cm]?[jt]s|[jt]sx)$`);
  const names = Object.keys(renames).map(escapeRegExp).join("|");
  const pattern = new RegExp(`(\\bfrom\\s*|\\bimport\\s*\\(?\\s*)(["'])(${names})\\2`, "g");
  bunPlugins().plugin({
    name: "vf-run-renames",
    setup(build) {
      build.onLoad({ filter }, ({ path }) => {
        const text = readFileSync(path, "utf8");
        const ext = /\.[cm]?([jt]sx?)$/.exec(path);
        return {
          contents: text.replace(
            pattern,
            (_m, lead: string, q: string, name: string) => `${lead}${q}${renames[name]}${q}`,
          ),
          loader: ext?.[1] ?? "ts",
        };
      });
    },
  });
}

/**
 * Runs `deno <subcommand> -A <flags> <script> <args>` with this Deno, stdio inherited;
 * resolves to its exit code (128 + n when a signal ended it).
 */
export function runDenoChild(
  subcommand: "run" | "test",
  flags: string[],
  script: string,
  args: string[],
): Promise<number> {
  return new Promise((resolve, reject) => {
    const argv = subcommand === "test"
      ? ["test", "-A", ...flags, script, ...(args.length ? ["--", ...args] : [])]
      : ["run", "-A", ...flags, script, ...args];
    const child = spawn(execPath(), argv, { stdio: "inherit", env: process.env });
    const forward = (sig: "SIGINT" | "SIGTERM") => () => child.kill(sig);
    const onInt = forward("SIGINT");
    const onTerm = forward("SIGTERM");
    process.on("SIGINT", onInt);
    process.on("SIGTERM", onTerm);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      process.off("SIGINT", onInt);
      process.off("SIGTERM", onTerm);
      const n = signal ? { SIGINT: 2, SIGTERM: 15, SIGKILL: 9 }[signal as string] : 0;
      resolve(code ?? 128 + (n ?? 1));
    });
  });
}
