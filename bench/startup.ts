/**
 * Startup of the single-file binary as it ships (scripts/build_binary.sh) and of `vf`
 * under `deno run` (the `vf` task of deno.json): median wall and CPU time (GNU time:
 * user + system, which a loaded machine disturbs less than the wall) of `vf --version`
 * and of `vf eval @ examples/quickstart.toml --model oracle --dry-run` over several runs
 * each, next to a one-line script built the same way or run by the same `deno run` (what
 * the runtime itself costs), with load averages.
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
import { buildBunBinary, denoTaskArgv, loadAverages, median, ROOT, RUNTIMES } from "./common.ts";
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

/** The medians of one way of starting `vf`, and of a one-line script started that way. */
interface StartupFigures {
  version: Timing;
  dryRun: Timing;
  empty: Timing;
}

/** Builds the binaries and returns the medians of each command, binary and `deno run`. */
export function startup(
  runs: number,
): { binary: StartupFigures; denoRun: StartupFigures; load: string } {
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
    const deno = denoTaskArgv("vf");
    const denoRun = deno.slice(0, -1); // `deno run <flags>` without cli.ts
    const binary = {
      empty: medianRun(() => [empty], dir, runs),
      version: medianRun(() => [bin, "--version"], dir, runs),
      dryRun: medianRun(() => [bin, ...dry().slice(1)], dir, runs),
    };
    return {
      binary,
      denoRun: {
        empty: medianRun(() => [...denoRun, hello], dir, runs),
        version: medianRun(() => [...deno, "--version"], dir, runs),
        dryRun: medianRun(() => [...deno, ...dry().slice(1)], dir, runs),
      },
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
      `--version ${ms(r.binary.version)} (target < 30 ms), eval --dry-run ` +
      `${ms(r.binary.dryRun)} (target < 100 ms); a one-line binary: ${ms(r.binary.empty)}\n` +
      `            vf under deno run: --version ${ms(r.denoRun.version)}, eval --dry-run ` +
      `${ms(r.denoRun.dryRun)}; a one-line script: ${ms(r.denoRun.empty)} (${r.load})`,
  );
}

if (import.meta.main) {
  printStartup(flag("runs", 11));
  process.exit(0);
}
