/**
 * Startup of the single-file binary (built with the `compile:bun` task's flags): median
 * wall time of `vf --version` and of `vf eval @ examples/quickstart.toml --model oracle
 * --dry-run` over several runs each, next to a binary built the same way from a one-line
 * script (what the runtime itself costs), with load averages.
 *
 * `deno run -A bench/startup.ts [--runs 11]`
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { buildBunBinary, loadAverages, median, ROOT, RUNTIMES } from "./common.ts";
import { flag } from "./throughput.ts";

function timeRun(argv: string[], cwd: string): number {
  const started = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, stdio: "ignore" });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}`);
  return ms;
}

/** Median milliseconds of `runs` runs of `argv`, after one that pays the page cache. */
function medianRun(argv: string[], cwd: string, runs: number): number {
  timeRun(argv, cwd);
  return median(Array.from({ length: runs }, () => timeRun(argv, cwd)));
}

/** Builds the binaries and returns the median milliseconds of each command. */
export function startup(
  runs: number,
): { versionMs: number; dryRunMs: number; emptyMs: number; load: string } {
  const dir = mkdtempSync(join(tmpdir(), "vf-bench-bin-"));
  try {
    const bin = buildBunBinary(dir);
    // the runtime's own start: a binary of one line, built with the same flags
    const hello = join(dir, "hello.ts");
    writeFileSync(hello, 'console.log("vf");\n');
    const empty = join(dir, "empty");
    const build = spawnSync(RUNTIMES.bun, ["build", "--compile", "--outfile", empty, hello], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (build.status !== 0) throw new Error("bun build --compile of a one-line script failed");
    copyFileSync(join(ROOT, "examples", "quickstart.toml"), join(dir, "quickstart.toml"));
    const load = loadAverages();
    let i = 0;
    const emptyMs = medianRun([empty], dir, runs);
    const versionMs = medianRun([bin, "--version"], dir, runs);
    const dry = () => [
      bin,
      "eval",
      "@",
      "quickstart.toml",
      "--model",
      "oracle",
      "--dry-run",
      "-o",
      `runs${i++}`,
    ];
    timeRun(dry(), dir);
    const dryRunMs = median(Array.from({ length: runs }, () => timeRun(dry(), dir)));
    return { versionMs, dryRunMs, emptyMs, load: `${load} at start, ${loadAverages()} at end` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints the figures of {@link startup}. */
export function printStartup(runs: number): void {
  const r = startup(runs);
  console.log(
    `startup     Bun binary (compile:bun task), median of ${runs}: --version ` +
      `${r.versionMs.toFixed(0)} ms (target < 30 ms), eval --dry-run ${r.dryRunMs.toFixed(0)} ms ` +
      `(target < 100 ms); a one-line binary: ${r.emptyMs.toFixed(0)} ms (${r.load})`,
  );
}

if (import.meta.main) {
  printStartup(flag("runs", 11));
  process.exit(0);
}
