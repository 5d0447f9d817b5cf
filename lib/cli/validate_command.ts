/**
 * `vf validate`: checks a taskset before any model is paid for — each task's `setup`, then
 * its gold `validate` hook, in a fresh runtime per check (Python v1's `validate`, see
 * `lib/run/run_validate.ts`). The terminal side: flags, live display, signals, the report
 * and the exit code (0 all valid, 3 some task not valid, 130 stopped).
 *
 * @module
 */
import process from "node:process";
import { resolve } from "node:path";
import { ConfigError, InputError } from "../../kit/errors.ts";
import { getAllEnv } from "../../kit/_runtime/env.ts";
import { loadEvalConfig } from "../config/load_config.ts";
import {
  runValidate,
  VALIDATE_CONFIG,
  type ValidateResult,
  validateRunName,
  type ValidateSettings,
} from "../run/run_validate.ts";
import { sortedJson } from "../run/validate_results.ts";
import { err, out } from "./output.ts";
import { openCommandSession } from "./command_session.ts";
import { parseTaskCommandArgs, type TaskCommandArgs } from "./task_command_args.ts";

/** Exit code when some task's check did not pass. */
export const INVALID_EXIT = 3;

/** A `--timeout.*` value: seconds > 0, or null when not given. */
export function timeoutSeconds(args: TaskCommandArgs, name: string): number | null {
  const raw = args.own.get(`timeout.${name}`) ?? args.ownFromFiles.get(`timeout.${name}`);
  if (raw === undefined || raw === null) return null;
  const n = Number(raw);
  if (typeof raw === "boolean" || !Number.isFinite(n) || n <= 0) {
    throw new ConfigError([{
      path: `timeout.${name}`,
      message: `must be a number of seconds > 0, not ${JSON.stringify(raw)}`,
      hint: `e.g. --timeout.${name} 60`,
    }]);
  }
  return n;
}

function flagOn(args: TaskCommandArgs, name: string): boolean {
  return args.own.get(name) === true || args.ownFromFiles.get(name) === true;
}

/** The header of the live display. */
function header(result: { taskset: string; runtime: string; checks: string; runDir: string }) {
  return [
    `vf validate · ${result.taskset} · ${result.runtime} runtime · ${result.checks} (no model)`,
    `output   ${result.runDir}`,
  ];
}

/** The lines of a finished run for the terminal: failing tasks, then the counts. */
function report(result: ValidateResult, runDir: string): string[] {
  const lines: string[] = [];
  for (const row of result.rows) {
    if (row.valid) continue;
    const what = `task ${row.index ?? row.task_position}${row.name ? ` (${row.name})` : ""}`;
    lines.push(
      `${row.reason.toUpperCase().padEnd(7)} ${what}${row.error ? ` — ${row.error}` : ""}`,
    );
  }
  const o = result.summary.outcomes as Record<string, number>;
  lines.push(
    `${o.valid}/${result.summary.total} valid · ${o.invalid} invalid · ${o.error} error · ` +
      `${o.timeout} timeout${o.missing ? ` · ${o.missing} missing` : ""} (${result.summary.mode})`,
    `results: ${runDir}`,
  );
  return lines;
}

/** Runs `vf validate` with the arguments after `validate`; returns the exit code. */
export async function validateCommand(argv: string[]): Promise<number> {
  const cwd = process.cwd();
  const args = parseTaskCommandArgs(argv, {
    command: "validate",
    own: { "only-setup": "boolean", "only-gold": "boolean" },
    runFile: VALIDATE_CONFIG,
    cwd,
  });
  const onlySetup = flagOn(args, "only-setup");
  const onlyGold = flagOn(args, "only-gold");
  if (onlySetup && onlyGold) {
    throw new InputError("usage", "pass at most one of --only-setup or --only-gold");
  }
  const settings: ValidateSettings = {
    mode: onlyGold ? "gold" : onlySetup ? "setup" : "all",
    setupS: timeoutSeconds(args, "setup"),
    totalS: timeoutSeconds(args, "total"),
  };
  const loaded = await loadEvalConfig(args.evalArgv, {
    cwd,
    base: args.base,
    validateOnly: true,
    env: getAllEnv(),
  });
  const { config } = loaded;
  if (
    config.resume && args.resumeDir === undefined && config.run.name == null &&
    config.run.dir == null
  ) {
    throw new InputError("resume_needs_run", "Cannot resume: --resume needs a run folder", {
      hint: "vf validate --resume outputs/<run>",
    });
  }
  config.run.name ??= validateRunName(config.env.taskset.id);
  config.run.dir ??= config.run.name;
  const runDir = args.resumeDir !== undefined
    ? resolve(cwd, args.resumeDir)
    : resolve(cwd, config.output_dir, config.run.dir);
  const session = openCommandSession({
    display: config.display,
    stopping: "cancelling checks in flight",
  });
  const { mode } = session;
  try {
    const checks = settings.mode === "all" ? "gold+setup" : settings.mode;
    const result = await runValidate(loaded, settings, {
      runDir,
      cwd,
      signal: session.signal,
      err: session.say,
      ...(mode === "json" || mode === "none" ? {} : {
        display: (init) =>
          session.display({
            header: header({ taskset: init.run.envId, runtime: init.run.runtime, checks, runDir }),
            snapshot: init.snapshot,
          }),
      }),
    });
    session.endDisplay();
    if (result.nothingToResume) await err(result.nothingToResume);
    if (config.display === "json") await out(sortedJson(result.summary));
    else if (config.display !== "none") await out(report(result, runDir).join("\n"));
    if (result.cancelled) return 130;
    return result.rows.length === result.summary.total && result.rows.every((r) => r.valid)
      ? 0
      : INVALID_EXIT;
  } finally {
    session.close();
  }
}
