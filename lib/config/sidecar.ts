/**
 * `configs/verifiers-ts.json`: the settings of a run that only verifiers-ts has (a
 * selection `seed`, runtime and harness keys Python's models forbid), kept beside
 * `configs/eval.json` so that file stays one Python's `EvalConfig` loads. Loading
 * `@ <run>/configs/eval.json` merges the sidecar back in; resume compares both.
 *
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join } from "node:path";
import { isPlainObject, type Json } from "./merge.ts";

/** What to do about a sidecar that cannot be read. */
export const SIDECAR_HINT =
  "vf eval wrote configs/verifiers-ts.json beside eval.json: restore it, " +
  "or remove it to load eval.json alone";

/** The sidecar's file name, inside a run's `configs/`. */
const SIDECAR_FILE = "verifiers-ts.json";

/** The sidecar of a run directory. */
export function sidecarPath(runDir: string): string {
  return join(runDir, "configs", SIDECAR_FILE);
}

/**
 * The sidecar beside a config file that is a run's `configs/eval.json`; undefined when
 * the file is not one or has no sidecar.
 */
export function readSidecarBeside(
  file: string,
  cwd: string,
): { ok: true; data: Json } | { ok: false; problem: string } | undefined {
  const path = isAbsolute(file) ? file : join(cwd, file);
  if (basename(path) !== "eval.json" || basename(dirname(path)) !== "configs") return undefined;
  const side = join(dirname(path), SIDECAR_FILE);
  if (!existsSync(side)) return undefined;
  try {
    const data = JSON.parse(readFileSync(side, "utf8"));
    if (!isPlainObject(data)) throw new Error("not a JSON object");
    return { ok: true, data: data as Json };
  } catch (err) {
    return { ok: false, problem: `${side}: unreadable (${(err as Error).message})` };
  }
}
