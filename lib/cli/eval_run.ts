/**
 * `vf eval`'s run from the terminal: the engine of `lib/run/run_eval.ts` with what only the
 * command line has — the live display on stderr, SIGINT / SIGTERM handling, the summary
 * printed on stdout, and the exit code.
 *
 * @module
 */
import process from "node:process";
import { exit as exitProcess } from "../../kit/_runtime/exit.ts";
import { getEnv } from "../../kit/_runtime/env.ts";
import { stderrIsTerminal, writeStderr } from "../../kit/_runtime/tty.ts";
import { redact } from "../../kit/secrets.ts";
import type { LoadedConfig } from "../config/load_config.ts";
import {
  createDisplay,
  headerLines,
  isCiValue,
  type LiveDisplay,
  resolveDisplayMode,
} from "./display.ts";
import { runEval, type RunEvalOptions, type RunResult } from "../run/run_eval.ts";
import { onStopSignals } from "./signals.ts";
import { renderSummary } from "../run/summary.ts";
import { useColor } from "./output.ts";

/** The options {@link runEvalFromCli} takes (the CLI fills display and signals). */
export type RunEvalCliOptions = RunEvalOptions & {
  /** The run directory (the CLI always writes one). */
  runDir: string;
  /** Raw stderr writer for the live display. @default process stderr */
  writeErr?: (text: string) => void;
  /** Ends the process at once (second signal). @default the runtime's exit */
  exitNow?: (code: number) => never;
  /** Plain display interval. @default 5000 */
  plainIntervalMs?: number;
};

/** The exit code of a run: 130 cancelled, 3 past `--fail-on-error`, else 0. */
export function exitCodeOf(result: RunResult): number {
  if (result.cancelled) return 130;
  if (result.summary.fail_on_error?.exceeded) return 3;
  return 0;
}

/**
 * Runs the evaluation of a loaded config from the CLI: live display on stderr, SIGINT /
 * SIGTERM handling (the first cancels and saves, a second exits at once with 130), the
 * final summary on stdout (table, or JSON with `display = json`). Returns the exit code.
 */
export async function runEvalFromCli(
  loaded: LoadedConfig,
  options: RunEvalCliOptions,
): Promise<number> {
  const config = loaded.config;
  const mode = resolveDisplayMode(config.display, {
    stderrIsTTY: stderrIsTerminal(),
    ci: isCiValue(getEnv("CI")),
  });
  const rawWriteErr = options.writeErr ?? writeStderr;
  const writeErr = (text: string) => rawWriteErr(redact(text));
  const err = options.err ?? ((line: string) => writeErr(line + "\n"));
  const ctrl = new AbortController();
  if (options.signal) {
    if (options.signal.aborted) ctrl.abort(options.signal.reason);
    else options.signal.addEventListener("abort", () => ctrl.abort(options.signal!.reason));
  }
  const exitNow = options.exitNow ?? exitProcess;
  let signalled = false;
  let live: LiveDisplay | null = null; // notices go through it, or its next frame erases them
  const uninstall = onStopSignals((sig, n) => {
    signalled = true;
    if (n === 1) {
      const notice =
        `${sig}: stopping — cancelling rollouts in flight and saving (${sig} again to exit at once)`;
      if (live) live.log(notice);
      else err(notice);
      ctrl.abort(new Error(`interrupted by ${sig}`));
    } else exitNow(130);
  });
  try {
    const display: RunEvalOptions["display"] = options.display ??
      (mode === "json" || mode === "none" ? undefined : (init) =>
        live = createDisplay(mode, {
          header: headerLines(init.run),
          snapshot: init.snapshot,
          write: writeErr,
          color: useColor(),
          columns: () => (process.stderr as { columns?: number }).columns || 100,
          intervalMs: mode === "plain" ? options.plainIntervalMs : undefined,
        }));
    const result = await runEval(loaded, {
      ...options,
      err,
      signal: ctrl.signal,
      ...(display === undefined ? {} : { display }),
    });

    if (result.nothingToResume) {
      err(result.nothingToResume);
      if (config.display === "json") options.out?.(JSON.stringify(result.summary, null, 2));
      return 0;
    }
    if (config.display === "json") options.out?.(JSON.stringify(result.summary, null, 2));
    else if (config.display !== "none") options.out?.(renderSummary(result.summary));
    const code = exitCodeOf(result);
    if (code === 3) {
      const s = result.summary;
      err(
        `error: ${s.counts.errored_episodes} of ${s.counts.episodes} episodes errored, past ` +
          `--fail-on-error ${config.fail_on_error} (exit 3)`,
      );
    }
    return code;
  } finally {
    // After a signal the handlers stay until the process exits, so that another signal
    // during the last writes still exits at once (and never kills the process mid-line).
    if (!signalled) uninstall();
  }
}
