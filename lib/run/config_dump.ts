/**
 * `configs/eval.json`: the resolved config with nulls kept and launch-only switches
 * (`dry_run`, `resume`, `clean`) left out. API keys are never in it — only the name
 * of the variable that holds one.
 *
 * @module
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createHash } from "node:crypto";
import process from "node:process";
import { type EvalConfig, LAUNCH_ONLY_KEYS } from "../config/eval_config.ts";
import { pythonJsonDumps } from "../tasks/hash.ts";
import { asOutputError } from "../util/fs_errors.ts";

/** The config as saved: a JSON-ready copy without launch-only keys. */
export function configForDump(config: EvalConfig): Record<string, unknown> {
  const copy = structuredClone(config) as Record<string, unknown>;
  for (const k of LAUNCH_ONLY_KEYS) delete copy[k];
  return copy;
}

/** SHA-256 of the dumped config's sorted-key JSON (compares a resume against its run). */
export function configDigest(config: Record<string, unknown>): string {
  return createHash("sha256").update(pythonJsonDumps(config)).digest("hex");
}

/**
 * Writes a file atomically: a temp file in the same directory, then rename. On failure
 * (disk full, unwritable path) the temp file is removed, the old file is left as it was,
 * and an OutputError names the file.
 */
export function writeFileAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, text);
    renameSync(tmp, path);
  } catch (err) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing was created
    }
    throw asOutputError(err, "", path) ?? err;
  }
}

/** Writes `<runDir>/configs/eval.json` and returns its path. */
export function writeEvalJson(runDir: string, config: EvalConfig): string {
  const path = join(runDir, "configs", "eval.json");
  writeFileAtomic(path, JSON.stringify(configForDump(config), null, 2) + "\n");
  return path;
}
