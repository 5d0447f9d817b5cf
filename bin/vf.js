#!/usr/bin/env node
/**
 * The `vf` executable npm links (`npx vf ...`, `npm exec vf -- ...`): runs `cli.ts` under
 * the Deno that npm installed with this package (`node_modules/deno`), or `deno` from
 * the PATH when there is none, with this package's `deno.json`. Arguments, standard
 * streams and the exit code pass through. A Ctrl-C in a terminal reaches both processes
 * at once, so SIGINT is only waited out here (passing it on would count as a second
 * Ctrl-C, which exits without saving); SIGTERM and SIGHUP are passed on.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The Deno executable npm installed beside this package, else `deno` from the PATH. */
function denoExecutable() {
  const name = process.platform === "win32" ? "deno.exe" : "deno";
  try {
    const dir = dirname(createRequire(import.meta.url).resolve("deno/package.json"));
    if (existsSync(join(dir, name))) return join(dir, name);
  } catch {
    // not installed as a package: fall back to the PATH
  }
  return "deno";
}

const child = spawn(
  denoExecutable(),
  [
    "run",
    "-A",
    // lets the run collect its heap at intervals (lib/run/heap_trim.ts) and caps the young
    // generation's growth, as the deno tasks do (deno.json)
    "--v8-flags=--expose-gc,--max-semi-space-size=16",
    "--config",
    join(root, "deno.json"),
    join(root, "cli.ts"),
    ...process.argv.slice(2),
  ],
  { stdio: "inherit" },
);
process.on("SIGINT", () => {});
for (const sig of ["SIGTERM", "SIGHUP"]) {
  process.on(sig, () => {
    if (child.exitCode === null) child.kill(sig);
  });
}
child.on("error", (e) => {
  process.stderr.write(
    `error: cannot start Deno to run vf (${e.message})\n` +
      "hint: run `npm install` in the verifiers-ts folder (it installs Deno), or put `deno` on the PATH\n",
  );
  process.exit(1);
});
child.on("exit", (code, signal) => {
  process.exit(code ?? (signal === "SIGINT" ? 130 : signal === "SIGTERM" ? 143 : 1));
});
