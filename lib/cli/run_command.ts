/**
 * `vf run <script.ts> [args...]`: runs a TypeScript (or JavaScript) script in which
 * `@verifiers/verifiers-ts` and `zod` resolve to this vf's own copies, so a machine with
 * only the `vf` binary runs scripted evaluations and plugin tests. The script sees its
 * arguments in `process.argv.slice(2)`; its exit code is the command's.
 *
 * On Bun and in the single-file binary the script runs in this process, the two
 * specifiers served as virtual modules. On Deno it runs in a child `deno run -A`: from a
 * checkout with this package's `deno.json` as config (the package resolves its own name),
 * from JSR with an import map onto the same published version.
 *
 * @module
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";
import { runtimeName } from "../../kit/_runtime/runtime_name.ts";
import { renameImportsUnder, runDenoChild } from "../../kit/_runtime/run_script.ts";
import { importModule } from "../plugins/import_module.ts";
import { provideSelfModules, SELF_NAME, TEST_MODULE } from "../plugins/self_modules.ts";
import { errorMessage, InputError, VerifiersError } from "../../kit/errors.ts";
import { VERSION } from "../../kit/version.ts";
import denoConfig from "../../deno.json" with { type: "json" };
import { err, out } from "./output.ts";
import { quote } from "../../kit/util/quote.ts";

/** The help text of `vf run`. */
const RUN_USAGE = `Usage: vf run <script.ts> [args...]

Runs a TypeScript or JavaScript script in which "@verifiers/verifiers-ts" and "zod"
resolve to this vf's own copies: nothing needs to be installed, so an image holding only
the vf binary runs scripted evaluations (docs/scripting.md) and plugin tests.
The script reads its arguments from process.argv.slice(2); vf run exits with the
script's exit code (1 when it throws, with the error on stderr).

Examples:
  vf run examples/eval_script.ts --tasks 2
  vf run vf-mathsets/mod_test.ts   # the tests vf init scaffolds (node:test files run as tests)`;

/** True when the script is a `node:test` test file. */
function isTestFile(script: string): boolean {
  return /(["'])node:test\1/.test(readFileSync(script, "utf8"));
}

/** Runs the script on Deno in a child process; returns its exit code. */
async function runOnDeno(script: string, args: string[]): Promise<number> {
  const mode = isTestFile(script) ? "test" : "run";
  const here = new URL("../../deno.json", import.meta.url);
  if (here.protocol === "file:" && existsSync(fileURLToPath(here))) {
    return await runDenoChild(mode, ["--config", fileURLToPath(here)], script, args);
  }
  // Published: the same version, and the npm packages at the versions it was built with.
  const imports: Record<string, string> = { ...denoConfig.imports };
  imports[SELF_NAME] = `jsr:${SELF_NAME}@${VERSION}`;
  imports[`${SELF_NAME}/kit`] = `jsr:${SELF_NAME}@${VERSION}/kit`;
  const dir = mkdtempSync(join(tmpdir(), "vf-run-"));
  try {
    const map = join(dir, "import_map.json");
    writeFileSync(map, JSON.stringify({ imports }));
    return await runDenoChild(mode, ["--import-map", map], script, args);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the script in this process (Bun, the binary); returns its exit code. */
async function runInProcess(script: string, args: string[]): Promise<number> {
  await provideSelfModules();
  const tests = await import("../plugins/mini_test.ts");
  // Bun runs node:test files only under `bun test` (which the binary does not have), and
  // its builtin cannot be replaced: the script's imports of it are renamed instead.
  renameImportsUnder(dirname(script), { "node:test": TEST_MODULE });
  process.argv.splice(0, process.argv.length, process.argv[0] ?? "vf", script, ...args);

  try {
    await importModule(pathToFileURL(script).href);
  } catch (e) {
    if (e instanceof VerifiersError) throw e;
    await err(
      `error: ${script} failed: ${e instanceof Error ? e.stack ?? e.message : errorMessage(e)}`,
    );
    return 1;
  }
  if (tests.hasCollected()) {
    const report = await tests.runCollected((line) => void out(line));
    await out(`${report.passed} passed, ${report.failed} failed, ${report.skipped} skipped`);
    if (report.failed > 0) return 1;
  }
  const code = process.exitCode;
  return typeof code === "number" ? code : Number(code ?? 0) || 0;
}

/** Runs `vf run` with the arguments after `run`; returns the exit code. */
export async function runCommand(argv: string[]): Promise<number> {
  const [first, ...args] = argv;
  if (first === "--help" || first === "-h") {
    await out(RUN_USAGE);
    return 0;
  }
  if (first === undefined) {
    await err(`error: vf run needs a script\n\n${RUN_USAGE}`);
    return 2;
  }
  const script = resolve(process.cwd(), first);
  if (!existsSync(script) || !statSync(script).isFile()) {
    throw new InputError("script_not_found", `Cannot run ${quote(first)}: no such file`, {
      hint: "give the path of a .ts or .js script",
    });
  }
  return runtimeName() === "deno"
    ? await runOnDeno(script, args)
    : await runInProcess(script, args);
}
