/**
 * Startup of the single-file binary as it ships (scripts/build_binary.sh) and of `vf`
 * under `deno run` (the `vf` task of deno.json): median wall and CPU time (GNU time:
 * user + system, which a loaded machine disturbs less than the wall) of `vf --version`
 * and of `vf eval @ examples/quickstart.toml --model oracle --dry-run` over several runs
 * each, next to a one-line script built the same way or run by the same `deno run` (what
 * the runtime itself costs), with load averages.
 *
 * `--before <checkout>` adds another checkout's binary and `deno run` to the figures.
 *
 * `deno run -A bench/startup.ts [--runs 11] [--before <checkout>]`
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { buildBunBinary, denoTaskArgv, loadAverages, median, ROOT, RUNTIMES } from "./common.ts";
import { flag, textFlag } from "./throughput.ts";

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

/** The medians of `vf --version` and `vf eval ... --dry-run` started one way. */
interface VfStartup {
  version: Timing;
  dryRun: Timing;
}

/** What {@link startup} measured: this checkout, the `--before` one, the one-line scripts. */
export interface StartupFigures {
  binary: VfStartup;
  denoRun: VfStartup;
  before: { binary: VfStartup; denoRun: VfStartup } | null;
  /** A one-line binary, and a one-line script under the same `deno run`. */
  empty: { binary: Timing; denoRun: Timing };
  load: string;
}

/**
 * Builds the binaries and returns the medians of each command, as the binary and under
 * `deno run`, for this checkout and for `before` (another checkout) when given.
 */
export function startup(runs: number, before?: string): StartupFigures {
  const dir = mkdtempSync(join(tmpdir(), "vf-bench-bin-"));
  try {
    // the runtime's own start: a binary of one line, and the same line under deno run
    const hello = join(dir, "hello.ts");
    writeFileSync(hello, 'console.log("vf");\n');
    const empty = join(dir, "empty");
    const build = spawnSync(RUNTIMES.bun, ["build", "--compile", "--outfile", empty, hello], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (build.status !== 0) throw new Error("bun build --compile of a one-line script failed");
    copyFileSync(join(ROOT, "examples", "quickstart.toml"), join(dir, "quickstart.toml"));
    let i = 0;
    const dry = () => [
      "eval",
      "@",
      "quickstart.toml",
      "--model",
      "oracle",
      "--dry-run",
      "-o",
      `runs${i++}`,
    ];
    const measure = (root: string, label: string): { binary: VfStartup; denoRun: VfStartup } => {
      const bin = buildBunBinary(mkdtempSync(join(dir, `${label}-`)), root);
      const deno = denoTaskArgv("vf", root);
      return {
        binary: {
          version: medianRun(() => [bin, "--version"], dir, runs),
          dryRun: medianRun(() => [bin, ...dry()], dir, runs),
        },
        denoRun: {
          version: medianRun(() => [...deno, "--version"], dir, runs),
          dryRun: medianRun(() => [...deno, ...dry()], dir, runs),
        },
      };
    };
    const load = loadAverages();
    const now = measure(ROOT, "now");
    const then = before === undefined ? null : measure(before, "before");
    const denoRun = denoTaskArgv("vf").slice(0, -1); // `deno run <flags>` without cli.ts
    return {
      ...now,
      before: then,
      empty: {
        binary: medianRun(() => [empty], dir, runs),
        denoRun: medianRun(() => [...denoRun, hello], dir, runs),
      },
      load: `${load} at start, ${loadAverages()} at end`,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints the figures of {@link startup}. */
export function printStartup(runs: number, before?: string): void {
  const r = startup(runs, before);
  const ms = (t: Timing) => `${t.wallMs.toFixed(0)} ms (CPU ${t.cpuMs.toFixed(0)} ms)`;
  const line = (label: string, f: VfStartup, empty: Timing, targets: boolean) =>
    `  ${label.padEnd(24)} --version ${ms(f.version)}${targets ? " (target < 30 ms)" : ""}, ` +
    `eval --dry-run ${ms(f.dryRun)}${targets ? " (target < 100 ms)" : ""}; ` +
    `one line: ${ms(empty)}`;
  const lines = [
    `startup     median of ${runs} (${r.load})`,
    line("Bun binary", r.binary, r.empty.binary, true),
    line("vf under deno run", r.denoRun, r.empty.denoRun, false),
  ];
  if (r.before) {
    lines.push(line("Bun binary, before", r.before.binary, r.empty.binary, false));
    lines.push(line("vf under deno run, before", r.before.denoRun, r.empty.denoRun, false));
  }
  console.log(lines.join("\n"));
}

if (import.meta.main) {
  printStartup(flag("runs", 11), textFlag("before"));
  process.exit(0);
}
