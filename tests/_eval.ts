/**
 * Runs a whole evaluation in-process, as `vf eval <argv>` would, into a temp output
 * directory, and reads back its episodes and summary.
 *
 * @module
 */
import "./_builtins.ts";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { resolveRunDir } from "../lib/run/naming.ts";
import { runEval } from "../lib/run/run_eval.ts";
import type { RunSummary } from "../lib/run/summary.ts";
import type { Episode } from "../kit/trace/types.ts";
import { assertPythonReadable } from "./_python_v1.ts";

/** What {@link evalInProcess} returns. */
export interface EvalOutcome {
  episodes: Episode[];
  summary: RunSummary;
  runDir: string;
  /** The raw lines of traces.jsonl. */
  lines: string[];
}

/** Runs `vf eval <argv> -o <tmp> --display none` in-process. */
export async function evalInProcess(
  argv: string[],
  options: { cwd?: string } = {},
): Promise<EvalOutcome> {
  const out = mkdtempSync(join(tmpdir(), "vf-e2e-"));
  const cwd = options.cwd ?? out;
  const loaded = await loadEvalConfig([...argv, "-o", out, "--display", "none"], { cwd });
  const runDir = resolveRunDir(loaded.config, cwd);
  const { summary } = await runEval(loaded, { runDir, cwd });
  assertPythonReadable(runDir);
  const lines = readFileSync(join(runDir, "traces.jsonl"), "utf8").split("\n").filter((l) => l);
  return { episodes: lines.map((l) => JSON.parse(l)), summary, runDir, lines };
}
