/**
 * Startup of the single-file binary (`bun build --compile`): median wall time of
 * `vf --version` and of `vf eval @ examples/quickstart.toml --model oracle --dry-run`
 * over several runs each.
 *
 * `deno run -A bench/startup.ts [--runs 11]`
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { BENCH, median } from "./common.ts";
import { flag } from "./throughput.ts";

const ROOT = join(BENCH, "..");

function timeRun(argv: string[], cwd: string): number {
  const started = performance.now();
  const r = spawnSync(argv[0], argv.slice(1), { cwd, stdio: "ignore" });
  const ms = performance.now() - started;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}`);
  return ms;
}

/** Builds the binary and returns the median milliseconds of both commands. */
export function startup(runs: number): { versionMs: number; dryRunMs: number; binary: string } {
  const dir = mkdtempSync(join(tmpdir(), "vf-bench-bin-"));
  const bin = join(dir, "vf");
  const bun = join(ROOT, "node_modules", ".bin", "bun");
  const build = spawnSync(bun, ["build", "--compile", "--outfile", bin, join(ROOT, "cli.ts")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (build.status !== 0) throw new Error("bun build --compile failed");
  copyFileSync(join(ROOT, "examples", "quickstart.toml"), join(dir, "quickstart.toml"));
  try {
    timeRun([bin, "--version"], dir); // the first run pays the page cache
    const version = Array.from({ length: runs }, () => timeRun([bin, "--version"], dir));
    const dry = Array.from({ length: runs }, (_, i) =>
      timeRun(
        [bin, "eval", "@", "quickstart.toml", "--model", "oracle", "--dry-run", "-o", `runs${i}`],
        dir,
      ));
    return { versionMs: median(version), dryRunMs: median(dry), binary: "bun build --compile" };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const runs = flag("runs", 11);
  const r = startup(runs);
  console.log(
    `startup     ${r.binary} binary, median of ${runs}: --version ${r.versionMs.toFixed(0)} ms, ` +
      `eval --dry-run ${r.dryRunMs.toFixed(0)} ms`,
  );
  process.exit(0);
}
