/**
 * `vf view`: look at runs in the browser. Serves a page on 127.0.0.1 that follows runs
 * still being written, or with `--out` writes the same page as one self-contained file.
 *
 * @module
 */
import { existsSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { InputError } from "../../kit/errors.ts";
import { onStopSignals } from "./signals.ts";
import { writeReport } from "../view/report.ts";
import { openRuns } from "../view/run_index.ts";
import { serveRuns } from "../view/server.ts";
import { err, out } from "./output.ts";
import { quote } from "../../kit/util/quote.ts";

/** The help text of `vf view`. */
const VIEW_USAGE = `vf view — look at runs in the browser

Usage:
  vf view <run-dir> [<run-dir> ...] [--port <n>]   serve a page on 127.0.0.1 and print its URL
  vf view --out <file.html> <run-dir> [...]        write the same page as one self-contained file

A run dir is what \`vf eval\` (or Python verifiers v1) writes: <output_dir>/<run>/ with
traces.jsonl; a traces.jsonl path works too. The page shows the run's header, the reward
mean with a 95% confidence interval and its histogram, a sortable, filterable per-task table
(mean reward, pass@k for 0/1 rewards, errors), errors by type, and each episode's trace. With
two runs it compares them task by task. A \`vf validate\` run shows which tasks' gold check or
setup failed and why; a \`vf replay\` run opens beside its source run and shows the score
changes per task (and the spread of \`-r\` rescores). A run still being written updates live.
Nothing is fetched from outside: the page is served from loopback only.

Options:
  --port <n>     port to listen on (default: one the OS chooses)
  --out <file>   write a report file instead of serving
  -h, --help     this help

Examples:
  vf view outputs/<run>
  vf view outputs/<run-a> outputs/<run-b> --port 8080
  vf view --out report.html outputs/<run>`;

interface ViewArgs {
  dirs: string[];
  port: number;
  out: string | null;
}

function parseViewArgs(argv: string[]): ViewArgs | "help" {
  const args: ViewArgs = { dirs: [], port: 0, out: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;

    const [flag, inline] = a.startsWith("--") && a.includes("=")
      ? [a.slice(0, a.indexOf("=")), a.slice(a.indexOf("=") + 1)]
      : [a, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === "") {
        throw new InputError("usage", `${flag} needs a value`, { hint: "vf view --help" });
      }
      return v;
    };
    if (flag === "-h" || flag === "--help") return "help";
    if (flag === "--port") {
      const v = value();
      const port = /^\d{1,5}$/.test(v) ? Number(v) : NaN;
      if (!(port >= 0 && port <= 65535)) {
        throw new InputError("usage", `--port must be a number from 0 to 65535, got ${quote(v)}`);
      }
      args.port = port;
    } else if (flag === "--out") {
      args.out = value();
    } else if (a.startsWith("-") && a !== "-") {
      throw new InputError("usage", `Unknown option ${flag} for vf view`, {
        hint: "vf view --help",
      });
    } else {
      args.dirs.push(a);
    }
  }
  if (args.dirs.length === 0) {
    throw new InputError("usage", "vf view needs at least one run directory", {
      hint: "vf view <run-dir> [<run-dir> ...] (see vf view --help)",
    });
  }
  return args;
}

function checkOutPath(path: string): string {
  const abs = resolve(path);
  const dir = dirname(abs);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new InputError("view_out_dir", `Cannot write ${path}: no directory ${dir}`, {
      hint: "create the directory first or pick another --out path",
    });
  }
  if (existsSync(abs) && statSync(abs).isDirectory()) {
    throw new InputError("view_out_dir", `Cannot write ${path}: it is a directory`, {
      hint: "give --out a file name, e.g. --out report.html",
    });
  }
  return abs;
}

/** Runs `vf view ...`; returns the exit code. */
export async function viewCommand(argv: string[]): Promise<number> {
  const args = parseViewArgs(argv);
  if (args === "help") {
    await out(VIEW_USAGE);
    return 0;
  }
  const outPath = args.out === null ? null : checkOutPath(args.out);
  const runs = openRuns(args.dirs);
  if (outPath !== null) {
    let size: number;
    try {
      size = writeReport(runs, outPath);
    } catch (e) {
      throw new InputError("view_out_write", `Cannot write ${args.out}: ${(e as Error).message}`, {
        hint: "check the path and free disk space",
      });
    }
    const episodes = runs.reduce((n, r) => n + r.rows.length, 0);
    await err(`wrote ${outPath} (${runs.length} run(s), ${episodes} episodes, ${size} bytes)`);
    return 0;
  }
  let server;
  try {
    server = await serveRuns(runs, args.port);
  } catch (e) {
    throw new InputError(
      "view_port",
      `Cannot listen on 127.0.0.1:${args.port}: ${(e as Error).message}`,
      {
        hint: "pick another --port, or leave it out to let the OS choose",
      },
    );
  }
  let stop = () => {};
  const stopped = new Promise<void>((done) => stop = done);
  const off = onStopSignals(() => stop());
  await out(server.url);
  await err(`serving ${runs.length} run(s) at ${server.url} — Ctrl-C stops`);
  await stopped;
  off();
  await server.close();
  return 0;
}
