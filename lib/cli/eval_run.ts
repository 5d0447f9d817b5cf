/**
 * `vf eval`'s run from the terminal: the engine of `lib/run/run_eval.ts` with what only the
 * command line has — the live display on stderr, SIGINT / SIGTERM handling, the summary
 * printed on stdout, and the exit code.
 *
 * @module
 */
import type { LoadedConfig } from "../config/load_config.ts";
import { headerLines } from "./display.ts";
import { runEval, type RunEvalOptions, type RunResult } from "../run/run_eval.ts";
import { openCommandSession } from "./command_session.ts";
import { renderSummary } from "../run/summary.ts";

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
  const session = openCommandSession({
    display: config.display,
    stopping: "cancelling rollouts in flight and saving",
    writeErr: options.writeErr,
    err: options.err,
    exitNow: options.exitNow,
  });
  const { mode, err } = session;
  if (options.signal) {
    const ctrl = session.controller;
    if (options.signal.aborted) ctrl.abort(options.signal.reason);
    else options.signal.addEventListener("abort", () => ctrl.abort(options.signal!.reason));
  }
  try {
    const display: RunEvalOptions["display"] = options.display ??
      (mode === "json" || mode === "none" ? undefined : (init) =>
        session.display({
          header: headerLines(init.run),
          snapshot: init.snapshot,
          intervalMs: mode === "plain" ? options.plainIntervalMs : undefined,
        }));
    const result = await runEval(loaded, {
      ...options,
      err,
      signal: session.signal,
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
    session.close();
  }
}
