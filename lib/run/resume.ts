/**
 * Resuming a run (Python `verifiers` v1 `cli/eval/resume.py`):
 *
 * - the launch's config must have the digest of the run's `configs/eval.json` (keys that
 *   only steer how a launch shows or judges its progress — `display`, `verbose`,
 *   `fail_on_error` — may change); otherwise it is refused, naming the differing keys;
 * - the target of each task key (the task hash) is (times selected) × `num_rollouts`;
 * - each saved line is kept when it parses, has traces, its key is targeted, the key's
 *   quota is not full yet, and `episode.ok`; torn, malformed, foreign, surplus and errored
 *   lines are dropped (and owed again when their task is targeted);
 * - when anything was dropped, `traces.jsonl` is rewritten to the kept lines (temp file,
 *   fsync, rename), byte for byte;
 * - what is owed is spread back over the selected tasks in order.
 *
 * Everything is streamed: memory holds one counter per selected task key, never the
 * episodes (each kept one is handed to a callback, e.g. the summary, and released).
 *
 * @module
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import process from "node:process";
import type { EvalConfig } from "../config/eval_config.ts";
import { InputError } from "../../kit/errors.ts";
import { pythonJsonDumps, taskHash } from "../../kit/tasks/hash.ts";
import type { TasksetView } from "../../kit/taskset_view.ts";
import type { Episode } from "../../kit/trace/types.ts";
import { configDigest, maskedSecretPaths, savedConfig } from "./config_dump.ts";
import { absorbPythonKeys } from "../config/python_compat.ts";
import { isPlainObject, type Json, mergeConfig } from "../config/merge.ts";
import { readSidecarBeside, SIDECAR_HINT } from "../config/sidecar.ts";
import { readLines } from "./traces_file.ts";

/** Config keys a resume may change: they steer how a launch reports, not what it runs. */
const RESUME_MAY_CHANGE = ["display", "verbose", "fail_on_error"] as const;

function comparable(dump: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...dump };
  for (const k of RESUME_MAY_CHANGE) delete copy[k];
  return copy;
}

/** The top-level keys whose values differ between two dumped configs (sorted). */
function differingKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) =>
    !(k in a) || !(k in b) || pythonJsonDumps(a[k]) !== pythonJsonDumps(b[k])
  ).sort();
}

/**
 * The top-level keys under which `now` differs from what a run saved. With `complete`
 * (a verifiers-ts run: eval.json plus its sidecar hold every key) any difference counts;
 * otherwise (a run Python wrote) only the keys the saved config names are compared, the
 * others being verifiers-ts defaults.
 */
function differingSavedKeys(
  saved: Record<string, unknown>,
  now: Record<string, unknown>,
  complete: boolean,
): string[] {
  if (complete) return differingKeys(saved, now);
  const differs = (a: unknown, b: unknown): boolean => {
    if (isPlainObject(a) && isPlainObject(b)) {
      return Object.keys(a).some((k) => differs(a[k], (b as Record<string, unknown>)[k]));
    }
    return pythonJsonDumps(a) !== pythonJsonDumps(b ?? null);
  };
  return Object.keys(saved).filter((k) => differs(saved[k], now[k])).sort();
}

/** What to do about a run's configs/eval.json that cannot be read back. */
const SAVED_CONFIG_HINT =
  "configs/eval.json is the config vf eval wrote for the run: restore it, " +
  "or start a new run without --resume";
const RESUME_HINT = "resume with `vf eval @ <run-dir>/configs/eval.json --resume` " +
  "(or `vf eval --resume <run-dir>`), from the directory the run was started in";

/**
 * Refuses to resume `runDir` with `config` unless the run exists and its saved config
 * (`configs/eval.json` with `configs/verifiers-ts.json`, or the eval.json Python wrote) has
 * the same digest (over every key but {@link RESUME_MAY_CHANGE}).
 */
export function checkResumeConfig(runDir: string, config: EvalConfig): void {
  const traces = join(runDir, "traces.jsonl");
  // a device or pipe there would be read without end (e.g. a link to /dev/zero)
  if (existsSync(traces) && !statSync(traces).isFile()) {
    throw new InputError(
      "resume_traces_not_file",
      `Cannot resume ${runDir}: its traces.jsonl is not a regular file`,
      { hint: "a run directory's traces.jsonl is the file vf eval wrote; restore it" },
    );
  }
  const path = join(runDir, "configs", "eval.json");
  if (!existsSync(path)) {
    throw new InputError(
      "resume_no_run",
      `Cannot resume ${runDir}: it holds no configs/eval.json`,
      { hint: RESUME_HINT },
    );
  }
  let saved: unknown;
  try {
    saved = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new InputError(
      "resume_config_unreadable",
      `Cannot resume ${runDir}: configs/eval.json is not valid JSON (${(err as Error).message})`,
      { hint: SAVED_CONFIG_HINT },
    );
  }
  if (typeof saved !== "object" || saved === null || Array.isArray(saved)) {
    throw new InputError(
      "resume_config_unreadable",
      `Cannot resume ${runDir}: configs/eval.json does not hold a config object`,
      { hint: SAVED_CONFIG_HINT },
    );
  }
  absorbPythonKeys(saved as Json, (p) => p);
  const side = readSidecarBeside(path, runDir);
  if (side && !side.ok) {
    throw new InputError("resume_config_unreadable", `Cannot resume: ${side.problem}`, {
      hint: SIDECAR_HINT,
    });
  }
  const savedAll = side ? mergeConfig(saved as Json, side.data) as Record<string, unknown> : saved;
  const before = comparable(savedAll as Record<string, unknown>);
  const saving = savedConfig(config);
  const nowAll = mergeConfig(saving.dump as Json, saving.side as Json) as Json;
  absorbPythonKeys(nowAll, (p) => p);
  const now = comparable(nowAll);
  if (configDigest(before) === configDigest(now)) return refuseMaskedSecrets(runDir, config);
  const keys = differingSavedKeys(before, now, side !== undefined);
  if (keys.length === 0) return refuseMaskedSecrets(runDir, config);
  throw new InputError(
    "resume_config_differs",
    `Cannot resume ${runDir}: the config differs from the run's configs/eval.json in ${
      keys.map((k) => `\`${k}\``).join(", ")
    }`,
    { hint: `${RESUME_HINT}; only ${RESUME_MAY_CHANGE.join(", ")} may change` },
  );
}

/** A saved config keeps no secrets: a resume whose config still holds their masks is refused. */
function refuseMaskedSecrets(runDir: string, config: EvalConfig): void {
  const masked = maskedSecretPaths(config);
  if (masked.length === 0) return;
  throw new InputError(
    "resume_secrets_masked",
    `Cannot resume ${runDir}: configs/eval.json keeps no secrets, and ${
      masked.map((k) => `\`${k}\``).join(", ")
    } ${masked.length === 1 ? "is" : "are"} masked there`,
    {
      hint: 'give them again with the resume, e.g. --client.headers \'{"<name>": "<value>"}\' ' +
        "or --client.base-url <url with credentials>",
    },
  );
}

/** Why saved lines were dropped. */
export interface DroppedLines {
  /** Not JSON (a torn last line, or garbage). */
  malformed: number;
  /** JSON, but not an episode with traces. */
  invalid: number;
  /** An episode of a task this run does not select. */
  foreign: number;
  /** Past its task's quota (duplicates). */
  surplus: number;
  /** Not ok. */
  errored: number;
}

/** What a resume keeps and owes. */
export interface ResumePlan {
  /** Selected tasks (N). */
  tasks: number;
  /** Episodes the run targets in all (N × R, or a shard's slots). */
  slots: number;
  /** Episodes kept. */
  kept: number;
  /** Episodes owed, by task key. */
  owed: Map<string, number>;
  /** Total episodes owed. */
  totalOwed: number;
  dropped: DroppedLines;
  /** True when traces.jsonl was rewritten. */
  rewritten: boolean;
}

function isEpisodeLike(v: unknown): v is Episode {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const e = v as Partial<Episode>;
  return Array.isArray(e.traces) && e.traces.length > 0 &&
    typeof e.task === "object" && e.task !== null &&
    typeof e.task.data === "object" && e.task.data !== null && !Array.isArray(e.task.data);
}

/**
 * Reads the run's `traces.jsonl` against the selected tasks and rewrites it to the kept
 * lines when anything is dropped. `onKept` gets each kept episode once. `rollouts` is the
 * run's `num_rollouts`, or the rollouts a shard runs of the task at each position.
 */
export async function planResume(
  runDir: string,
  selected: TasksetView,
  rollouts: number | ((position: number) => number),
  onKept: (episode: Episode) => void,
): Promise<ResumePlan> {
  const remaining = new Map<string, number>();
  let tasks = 0;
  let slots = 0;
  for await (const task of selected) {
    const quota = typeof rollouts === "number" ? rollouts : rollouts(tasks);
    tasks++;
    slots += quota;
    if (quota === 0) continue;
    const key = taskHash(task);
    remaining.set(key, (remaining.get(key) ?? 0) + quota);
  }
  const dropped: DroppedLines = { malformed: 0, invalid: 0, foreign: 0, surplus: 0, errored: 0 };
  let kept = 0;
  let rewrite = false;
  const path = join(runDir, "traces.jsonl");
  // temp files of an earlier resume that was killed while rewriting
  for (const name of readdirSync(runDir)) {
    if (name.startsWith("traces.jsonl.resume-")) rmSync(join(runDir, name), { force: true });
  }
  if (existsSync(path)) {
    const tmp = `${path}.resume-${process.pid}`;
    const fd = openSync(tmp, "w");
    const encoder = new TextEncoder();
    try {
      for (const line of readLines(path)) {
        if (line.text.trim() === "") {
          if (line.text !== "" || !line.terminated) rewrite = true;
          continue;
        }
        let value: unknown;
        try {
          value = JSON.parse(line.text);
        } catch {
          dropped.malformed++;
          rewrite = true;
          continue;
        }
        if (!isEpisodeLike(value)) {
          dropped.invalid++;
          rewrite = true;
          continue;
        }
        const key = taskHash(value.task.data);
        const left = remaining.get(key);
        if (left === undefined) {
          dropped.foreign++;
          rewrite = true;
          continue;
        }
        if (left <= 0) {
          dropped.surplus++;
          rewrite = true;
          continue;
        }
        if (value.ok !== true) {
          dropped.errored++;
          rewrite = true;
          continue;
        }
        remaining.set(key, left - 1);
        kept++;
        if (!line.terminated) rewrite = true;
        const buf = encoder.encode(line.text + "\n");
        let off = 0;
        while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
        onKept(value);
      }
      if (rewrite) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (rewrite) renameSync(tmp, path);
    else rmSync(tmp, { force: true });
    if (rewrite) syncDir(runDir);
  }
  let totalOwed = 0;
  for (const [k, v] of remaining) {
    if (v > 0) totalOwed += v;
    else remaining.delete(k);
  }
  return { tasks, slots, kept, owed: remaining, totalOwed, dropped, rewritten: rewrite };
}

/** Makes a rename durable (best effort: not every platform can fsync a directory). */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // best effort
  }
}

/** The message of a resume that owes nothing. */
export function nothingToResume(
  runDir: string,
  tasks: number,
  rollouts: number,
  slots = tasks * rollouts,
): string {
  const what = slots === tasks * rollouts ? `${tasks}x${rollouts}` : `${slots} (this shard's)`;
  return `nothing to resume in ${runDir}: all ${what} rollouts already completed without error`;
}
