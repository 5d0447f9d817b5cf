/**
 * Helpers for tests that build plugin packages the way users do (`vf init`, `npm run
 * bundle`, `npm pack`) and run `vf` under a chosen host: `deno run`, Bun, or a
 * single-file binary.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { CLI, type CliResult, runProcess } from "./_cli.ts";

/** The repository root. */
export const ROOT = join(import.meta.dirname!, "..");

/** Where the pinned toolchain lives (deno, bun). */
export const TOOL_BIN = join(ROOT, "node_modules", ".bin");

/** The script that builds the single-file binary as it ships: `bash BUILD_BINARY <outfile>`. */
export const BUILD_BINARY = join(ROOT, "scripts", "build_binary.sh");

/**
 * A URL path for a module served on loopback that no earlier run served: under `deno run` a
 * URL plugin is imported natively and Deno caches remote modules by URL, so a port the OS
 * hands out again would be answered from an earlier run's copy without asking the server.
 */
export function pathOfThisRun(file: string): string {
  return `/${randomUUID()}/${file}`;
}

/** How `vf` is started. */
export type VfHost = "deno" | "bun" | "binary";

/** What a child process returned. */
export type RunResult = Pick<CliResult, "code" | "stdout" | "stderr">;

/** Runs a program to completion and collects its output (killed after `timeoutMs`, 120 s). */
export function runProgram(
  cmd: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RunResult> {
  return runProcess(cmd, args, { ...options, timeoutMs: options.timeoutMs ?? 120_000 });
}

/** The argv that starts `vf` on a host (`binary` needs the binary's path). */
export function vfArgv(
  host: VfHost,
  args: string[],
  binary?: string,
): [string, ...string[]] {
  switch (host) {
    case "deno":
      return [join(TOOL_BIN, "deno"), "run", "-A", CLI, ...args];
    case "bun":
      return [join(TOOL_BIN, "bun"), CLI, ...args];
    case "binary":
      if (!binary) throw new Error("vfArgv: the binary host needs the binary's path");
      return [binary, ...args];
  }
}

/** Runs `vf <args>` on a host. */
export function runVf(
  host: VfHost,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; binary?: string } = {},
): Promise<RunResult> {
  const [cmd, ...rest] = vfArgv(host, args, options.binary);
  return runProgram(cmd, rest, options);
}

/** Writes an executable `vf` wrapper script for a host into `dir`; returns its path. */
export function vfWrapper(dir: string, host: VfHost, binary?: string): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `vf-${host}`);
  const argv = vfArgv(host, [], binary).map((a) => `'${a}'`).join(" ");
  writeFileSync(path, `#!/bin/sh\nexec ${argv} "$@"\n`, { mode: 0o755 });
  return path;
}

/**
 * Stands in for `npm install` in a scaffolded plugin package (nothing is published
 * where these tests can reach): `zod` and `@types/node` linked from this repository,
 * `@verifiers/verifiers-ts` as a package re-exporting this repository's mod.ts.
 */
export function installPluginDeps(dir: string): void {
  const nm = join(dir, "node_modules");
  mkdirSync(join(nm, "@types"), { recursive: true });
  mkdirSync(join(nm, "@verifiers", "verifiers-ts"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", "zod"), join(nm, "zod"));
  symlinkSync(join(ROOT, "node_modules", "@types", "node"), join(nm, "@types", "node"));
  const lib = join(nm, "@verifiers", "verifiers-ts");
  writeFileSync(
    join(lib, "package.json"),
    JSON.stringify({
      name: "@verifiers/verifiers-ts",
      type: "module",
      exports: { ".": "./index.js" },
    }),
  );
  writeFileSync(
    join(lib, "index.js"),
    `export * from ${JSON.stringify(join(ROOT, "mod.ts"))};\n`,
  );
}

/** An environment whose PATH finds this repository's `bun` and `deno` first. */
export function toolchainEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: `${TOOL_BIN}:${process.env.PATH ?? "/usr/bin:/bin"}`, ...extra };
}
