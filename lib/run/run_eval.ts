/**
 * Running an evaluation (filled in by the rollout engine).
 *
 * @module
 */
import type { LoadedConfig } from "../config/load_config.ts";
import { InputError } from "../errors.ts";

/** Options of {@link runEvalFromCli}. */
export interface RunEvalCliOptions {
  runDir: string;
  cwd: string;
}

/** Runs the evaluation of a loaded config; returns the exit code. */
export function runEvalFromCli(_loaded: LoadedConfig, _options: RunEvalCliOptions): Promise<number> {
  return Promise.reject(
    new InputError("not_implemented", "Cannot run the evaluation yet", { hint: "use --dry-run" }),
  );
}
