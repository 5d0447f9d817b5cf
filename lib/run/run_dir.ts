/**
 * The run directory: guards (existing results, `--clean` scope), the numbered log
 * folder of each launch with a `logs/latest` link, and the log file.
 *
 * @module
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeSync,
} from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { InputError } from "../../kit/errors.ts";
import { redact } from "../../kit/secrets.ts";
import { outputDirProblem } from "../../kit/util/output_dir.ts";
import { quote } from "../../kit/util/quote.ts";

/** True when `child` is strictly inside `parent`. */
function isStrictlyInside(child: string, parent: string): boolean {
  const rel = relative(resolve(parent), resolve(child));
  return rel !== "" && !rel.startsWith("..") && !rel.startsWith(sep) && rel !== ".";
}

/** Applies `--clean` and the existing-results guard before a fresh run. */
export function prepareRunDir(
  runDir: string,
  outputDir: string,
  options: { clean: boolean; resume: boolean; resultsFile?: string },
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
  const traces = join(runDir, options.resultsFile ?? "traces.jsonl");
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
  try {
    mkdirSync(runDir, { recursive: true });
  } catch (err) {
    // a dangling link or a file where the run directory goes is bad input, named as given
    const problem = outputDirProblem(runDir);
    if (problem === null) throw err;
    throw new InputError(
      "output_unwritable",
      `cannot make the run directory ${quote(runDir)}: ${problem}`,
      { hint: "pick another --run.name or -o/--output-dir, or remove what is in the way" },
    );
  }
}

/**
 * Creates `logs/attempt_<n>` (n = 1 + the highest existing) and points `logs/latest` at it
 * (a relative symlink, swapped atomically). Returns the folder and `n`.
 */
export function newLogAttempt(runDir: string): { dir: string; attempt: number } {
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
  return { dir, attempt: n };
}

/** A line logger appending to a file (one write per line, the file kept open). */
export interface FileLogger {
  (level: string, message: string): void;
  /** Closes the file; later lines are dropped. Idempotent. */
  close(): void;
}

/** Opens a {@link FileLogger} on `path`. */
export function fileLogger(path: string): FileLogger {
  let fd: number | null = openSync(path, "a");
  const log = ((level: string, message: string) => {
    if (fd === null) return;
    try {
      writeSync(
        fd,
        `${new Date().toISOString()} ${level.toUpperCase().padEnd(5)} ${redact(message)}\n`,
      );
    } catch {
      // the log is best effort; results never depend on it
    }
  }) as FileLogger;
  log.close = () => {
    if (fd === null) return;
    closeSync(fd);
    fd = null;
  };
  return log;
}
