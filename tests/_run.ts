/**
 * Helpers of the run tests: in-process runs into temp directories, reading a run's
 * traces.jsonl back, and counting episodes per task.
 *
 * @module
 */
import "./_builtins.ts";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LoadedConfig, loadEvalConfig } from "../lib/config/load_config.ts";
import { resolveRunDir } from "../lib/run/naming.ts";
import { runEval, type RunEvalOptions, type RunResult } from "../lib/run/run_eval.ts";
import type { Episode } from "../kit/trace/types.ts";
import { assertPythonReadable } from "./_python_v1.ts";

/** The cheap in-process plugins (generator taskset, instant harness, memory runtime). */
export const FAST = join(import.meta.dirname!, "fixtures", "run", "fast_plugins.ts");

/** Flags selecting the fast plugins: `count` generated tasks, no model call, no disk. */
export function fastArgs(count: number): string[] {
  return [
    FAST,
    "--env.taskset.count",
    String(count),
    "--env.agent.harness.id",
    FAST,
    "--env.agent.runtime.type",
    FAST,
    "-m",
    "scripted",
  ];
}

/** A fresh temp directory. */
export function tmp(prefix = "vf-run-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A loaded config and its run directory. */
export interface Prepared {
  loaded: LoadedConfig;
  runDir: string;
  cwd: string;
}

/** Loads `vf eval <argv> --display none` with `cwd` as working directory. */
export async function prepare(argv: string[], cwd: string): Promise<Prepared> {
  const loaded = await loadEvalConfig([...argv, "--display", "none"], { cwd });
  const runDir = loaded.resumeDir ?? resolveRunDir(loaded.config, cwd);
  return { loaded, runDir, cwd };
}

/** Runs `vf eval <argv>` in-process (output under `cwd`). */
export async function run(
  argv: string[],
  cwd: string,
  options: Partial<RunEvalOptions> = {},
): Promise<RunResult & { runDir: string }> {
  const p = await prepare(argv, cwd);
  const result = await runEval(p.loaded, { runDir: p.runDir, cwd, ...options });
  assertPythonReadable(p.runDir);
  return { ...result, runDir: p.runDir };
}

/** The lines of a run's traces.jsonl (empty when absent). */
export function traceLines(runDir: string): string[] {
  const path = join(runDir, "traces.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter((l) => l !== "");
}

/** The episodes of a run's traces.jsonl (every line must parse). */
export function episodesOf(runDir: string): Episode[] {
  return traceLines(runDir).map((l) => JSON.parse(l) as Episode);
}

/** Episodes per task hash. */
export function perTask(episodes: Episode[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const e of episodes) m.set(e.task.hash, (m.get(e.task.hash) ?? 0) + 1);
  return m;
}

/** Polls `check` every 20 ms until it returns true or `timeoutMs` passes. */
export async function waitFor(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}
