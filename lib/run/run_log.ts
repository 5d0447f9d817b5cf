/**
 * Where a run's messages go: `logs/<attempt>/eval.log` (nothing for an in-memory run),
 * and the user's stream (through the live display while there is one), warnings shown
 * once per distinct text.
 *
 * @module
 */
import { join } from "node:path";
import type { EvalConfig } from "../config/eval_config.ts";
import type { LiveDisplay } from "./progress.ts";
import { type FileLogger, fileLogger, newLogAttempt } from "./run_dir.ts";

/** A logger that keeps nothing (in-memory runs). */
function nullLogger(): FileLogger {
  const log = (() => {}) as unknown as FileLogger;
  log.close = () => {};
  return log;
}

/** Where a run's messages go: its log file, and the user (through the display when live). */
export interface RunLog {
  logFile: FileLogger;
  logDir: string | null;
  attempt: number;
  /** A line for the user (through the live display when there is one). */
  say(line: string): void;
  /** A log line, shown to the user too with `verbose`. */
  log(message: string): void;
  /** A warning: logged, and shown once per distinct text (at most 50). */
  warn(message: string): void;
  /** Sets (or clears) the live display lines go through. */
  setDisplay(display: LiveDisplay | null): void;
}

/** Step 2: the launch's log (a new attempt under `logs/`) and the user's messages. */
export function openRunLog(
  config: EvalConfig,
  options: { runDir: string | null; err?: (line: string) => void },
): RunLog {
  const { runDir } = options;
  const { dir: logDir, attempt } = runDir !== null
    ? newLogAttempt(runDir)
    : { dir: null, attempt: 1 };
  const logFile = logDir !== null ? fileLogger(join(logDir, "eval.log")) : nullLogger();
  let display: LiveDisplay | null = null;
  const say = (line: string) => (display ? display.log(line) : options.err?.(line));
  const log = (m: string) => {
    logFile("info", m);
    if (config.verbose) say(m);
  };
  // Warnings go to the log; the terminal sees each distinct one once (a warning per
  // rollout would drown the display), and per-call model failures only with -v (the
  // display and the summary count them as errors).
  const shown = new Set<string>();
  const warn = (m: string) => {
    logFile("warn", m);
    if (shown.has(m) || shown.size > 50) return;
    shown.add(m);
    say(
      shown.size > 50
        ? `warning: more warnings${logDir !== null ? ` in ${join(logDir, "eval.log")}` : ""}`
        : `warning: ${m}`,
    );
  };
  return {
    logFile,
    logDir,
    attempt,
    say,
    log,
    warn,
    setDisplay: (d) => (display = d),
  };
}
