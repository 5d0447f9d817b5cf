/**
 * Startup of the single-file binary as it ships (scripts/build_binary.sh): median wall and
 * CPU time (GNU time: user + system, which a loaded machine disturbs less than the wall)
 * of `vf --version` and of `vf eval @ examples/quickstart.toml --model oracle --dry-run`
 * over several runs each, next to a plain `bun build --compile` binary of a one-line
 * script (what the runtime itself costs), with load averages.
 *
 * `deno run -A bench/startup.ts [--runs 11]`
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { buildBunBinary, loadAverages, median, ROOT, RUNTIMES } from "./common.ts";
import { flag } from "./throughput.ts";

/** Wall and CPU (user + system, from GNU time) milliseconds of one run. */
interface Timing {
  wallMs: number;
  cpuMs: number;
}

function timeRun(argv: string[], cwd: string): Timing {
  const report = join(cwd, "time.txt");
  const started = performance.now();
  const r = spawnSync("/usr/bin/time", ["-f", "%U %S", "-o", report, ...argv], {
    cwd,
    stdio: "ignore",
  });
  const wallMs = performance.now() - started;
  if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}`);
  const [user, sys] = readFileSync(report, "utf8").trim().split("\n").at(-1)!.split(" ").map(
    Number,
  );
  return { wallMs, cpuMs: (user! + sys!) * 1000 };
}

/** Medians of `runs` runs of `argv()`, after one that pays the page cache. */
function medianRun(argv: () => string[], cwd: string, runs: number): Timing {
  timeRun(argv(), cwd);
  const all = Array.from({ length: runs }, () => timeRun(argv(), cwd));
  return { wallMs: median(all.map((t) => t.wallMs)), cpuMs: median(all.map((t) => t.cpuMs)) };
}

/** Builds the binaries and returns the medians of each command. */
export function startup(
  runs: number,
): { version: Timing; dryRun: Timing; empty: Timing; load: string } {
  const dir = mkdtempSync(join(tmpdir(), "vf-bench-bin-"));
  try {
    const bin = buildBunBinary(dir);
    // the runtime's own start: a binary of one line
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
    return {
      empty: medianRun(() => [empty], dir, runs),
      version: medianRun(() => [bin, "--version"], dir, runs),
      dryRun: medianRun(dry, dir, runs),
      load: `${load} at start, ${loadAverages()} at end`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints the figures of {@link startup}. */
export function printStartup(runs: number): void {
  const r = startup(runs);
  const ms = (t: Timing) => `${t.wallMs.toFixed(0)} ms (CPU ${t.cpuMs.toFixed(0)} ms)`;
  console.log(
    `startup     Bun binary as this checkout builds it, median of ${runs}: ` +
      `--version ${ms(r.version)} (target < 30 ms), eval --dry-run ${ms(r.dryRun)} ` +
      `(target < 100 ms); a one-line binary: ${ms(r.empty)} (${r.load})`,
  );
}

if (import.meta.main) {
  printStartup(flag("runs", 11));
  process.exit(0);
}
