/**
 * The run directory: guards (existing results, `--clean` scope), the numbered log
 * folder of each launch with a `logs/latest` link, and the log file.
 *
 * @module
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { InputError } from "../errors.ts";

/** True when `child` is strictly inside `parent`. */
export function isStrictlyInside(child: string, parent: string): boolean {
  const rel = relative(resolve(parent), resolve(child));
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) && rel !== ".";
}

/** Applies `--clean` and the existing-results guard before a fresh run. */
export function prepareRunDir(
  runDir: string,
  outputDir: string,
  options: { clean: boolean; resume: boolean },
): void {
  if (options.clean && !options.resume && existsSync(runDir)) {
    if (!isStrictlyInside(runDir, outputDir)) {
      throw new InputError(
        "clean_outside_output",
        `Cannot clean ${runDir}: it is not strictly inside the output directory ${
          resolve(outputDir)
        }`,
        { hint: "--clean only deletes run directories under output_dir" },
      );
    }
    rmSync(runDir, { recursive: true, force: true });
  }
  const traces = join(runDir, "traces.jsonl");
  if (!options.resume && existsSync(traces) && statSync(traces).size > 0) {
    throw new InputError(
      "run_dir_has_results",
      `run directory ${runDir} already contains results`,
      {
        hint:
          "append --resume to continue it, overwrite it with --clean, or pick another --run.name",
      },
    );
  }
  mkdirSync(runDir, { recursive: true });
}

/** Creates `logs/attempt_<n>` (n = 1 + the highest existing) and points `logs/latest` at it. */
export function newLogAttempt(runDir: string): string {
  const logs = join(runDir, "logs");
  mkdirSync(logs, { recursive: true });
  let n = 1;
  for (const name of readdirSync(logs)) {
    const m = /^attempt_(\d+)$/.exec(name);
    if (m) n = Math.max(n, Number(m[1]) + 1);
  }
  const dir = join(logs, `attempt_${n}`);
  mkdirSync(dir);
  const tmp = join(logs, `.latest-${n}`);
  rmSync(tmp, { force: true });
  symlinkSync(`attempt_${n}`, tmp);
  renameSync(tmp, join(logs, "latest"));
  return dir;
}

/** A line logger appending to a file. */
export function fileLogger(path: string): (level: string, message: string) => void {
  return (level, message) => {
    appendFileSync(
      path,
      `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${message}\n`,
    );
  };
}
