/**
 * What a run accumulates as it goes (the summary so far, what it owes, the sandboxes
 * not confirmed stopped) and the `summary.json` made from it.
 *
 * @module
 */
import { join } from "node:path";
import type { LoadedConfig } from "../config/load_config.ts";
import { redact } from "../../kit/secrets.ts";
import { writeOutputAtomic } from "./config_dump.ts";
import type { RunSummary, SummaryAccumulator, UnconfirmedSandbox } from "./summary.ts";

/** The state a run accumulates: the summary so far and what it still owes. */
export interface RunState {
  started: number;
  acc: SummaryAccumulator;
  /** Episodes the run owes in all (selected tasks × rollouts). */
  expected: number;
  /** Episodes owed per task key (a resume, a shard); null: every selected slot is owed. */
  owed: Map<string, number> | null;
  unconfirmed: UnconfirmedSandbox[];
}

/** The summary of the run so far with the given status. */
export function summaryOf(
  loaded: LoadedConfig,
  runDir: string | null,
  state: RunState,
  attempt: number,
  status: RunSummary["status"],
): RunSummary {
  const { config } = loaded;
  return state.acc.summary({
    run: { name: config.run.name ?? "", dir: runDir ?? "" },
    model: config.model ?? "",
    taskset: config.env.taskset.id,
    harness: config.env.agent.harness.id,
    runtime: config.env.agent.runtime.type,
    status,
    attempt,
    wall_time_s: (Date.now() - state.started) / 1000,
    unconfirmed_sandboxes: state.unconfirmed,
    output_dir: runDir ?? "",
    expected: state.expected,
    fail_on_error_threshold: config.fail_on_error,
  });
}

/** Writes `summary.json` (redacted) unless the run is in memory. */
export function writeSummary(runDir: string | null, summary: RunSummary): void {
  if (runDir !== null) {
    writeOutputAtomic(
      join(runDir, "summary.json"),
      redact(JSON.stringify(summary, null, 2)) + "\n",
    );
  }
}
