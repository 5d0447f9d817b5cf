/**
 * The checks of a config beyond its schema: keys zod would drop (`__proto__`), run names
 * that would escape the output directory, URLs that are not http(s), what a run needs
 * (a taskset, a model), judges sharing a reward key; and zod's issues described with
 * where each value was set and a did-you-mean for unknown keys.
 *
 * @module
 */
import type { z } from "zod";
import { resolve as resolvePath } from "node:path";
import type { JudgePlugin } from "../../kit/contract.ts";
import type { ConfigIssue } from "../../kit/errors.ts";
import { judgeRewardKey } from "./judge_key.ts";
import type { EvalConfig } from "./eval_config.ts";
import { issueAt, type Provenance } from "./provenance.ts";
import { childSchema, objectShape } from "./schema_walk.ts";
import { closest } from "../../kit/util/suggest.ts";
import { outputDirProblem } from "../../kit/util/output_dir.ts";
import { quote } from "../../kit/util/quote.ts";

/**
 * Paths of every `__proto__` key in config data. Such a key is kept as plain data by the
 * merge, but zod drops it silently from records, so it is refused instead.
 */
export function protoKeyPaths(data: unknown): string[][] {
  const found: string[][] = [];
  const stack: [unknown, string[]][] = [[data, []]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    for (const [k, x] of Object.entries(v)) {
      if (k === "__proto__") found.push([...path, k]);
      stack.push([x, [...path, k]]);
    }
  }
  return found;
}

/** Longest `run.name` / `run.dir` segment, in bytes (the usual file name limit). */
const MAX_NAME_BYTES = 255;

/** Why `text` is not an http(s) URL, or null when it is one. */
export function urlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${quote(text)} is not a URL (expected http:// or https://...)`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `${quote(text)} is not an http(s) URL (scheme ${url.protocol})`;
  }
  return null;
}

/**
 * Why a run name cannot be a directory name under output_dir, or null. `run.dir` (a path,
 * which may point anywhere as in Python verifiers) is only checked for NUL characters and
 * over-long segments (`isPath`).
 */
function nameProblem(name: string, isPath: boolean): string | null {
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(name)) return `${quote(name)} contains a control character`;
  if (!isPath) {
    if (name === "") return "a run name cannot be empty";
    if (/[/\\]/.test(name)) {
      return `${quote(name)} contains a path separator; a run name is one directory name`;
    }
    if (name === ".." || name === ".") {
      return `${quote(name)} would name the output directory or its parent, not a run directory`;
    }
  }
  for (const part of isPath ? name.split("/") : [name]) {
    if (new TextEncoder().encode(part).length > MAX_NAME_BYTES) {
      return `${quote(name)} is longer than ${MAX_NAME_BYTES} bytes`;
    }
  }
  return null;
}

/** What to do about an output directory that cannot be made or written. */
const OUTPUT_DIR_HINT = "give -o/--output-dir a directory you can write, or a new path below one";

/**
 * Refuses run names that would escape or break the output directory, an output directory
 * below something that is not a directory, and base URLs that are not http(s) URLs.
 */
function checkPathsAndUrls(
  config: EvalConfig,
  prov: Provenance,
  cwd: string,
): ConfigIssue[] {
  const problems: ConfigIssue[] = [];
  const name = config.run.name;
  if (name !== null) {
    const why = nameProblem(name, false);
    if (why) problems.push(issueAt(prov, ["run", "name"], why));
  }
  const dir = config.run.dir;
  if (dir !== null) {
    const why = nameProblem(dir.replace(/\\/g, "/"), true);
    if (why) problems.push(issueAt(prov, ["run", "dir"], why));
  }
  const outDirProblem = outputDirProblem(resolvePath(cwd, config.output_dir));
  if (outDirProblem !== null) {
    problems.push(
      issueAt(
        prov,
        ["output_dir"],
        `cannot use ${quote(config.output_dir)} as the output directory: ${outDirProblem}`,
        OUTPUT_DIR_HINT,
      ),
    );
  }
  if (config.client.base_url !== null) {
    const why = urlProblem(config.client.base_url);
    if (why) problems.push(issueAt(prov, ["client", "base_url"], why));
  }
  config.env.taskset.task.judges.forEach((j, i) => {
    if (j.base_url === null || j.base_url === undefined) return;
    const why = urlProblem(j.base_url);
    if (why) {
      problems.push(
        issueAt(prov, ["env", "taskset", "task", "judges", String(i), "base_url"], why),
      );
    }
  });
  return problems;
}

export function describeIssue(
  issue: z.core.$ZodIssue,
  prov: Provenance,
  schema: z.ZodType,
): ConfigIssue[] {
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    const parent = path.length ? getSchemaAt(schema, path) : schema;
    const shape = parent ? objectShape(parent) : null;
    return issue.keys.map((k) => {
      const guess = shape ? closest(k, Object.keys(shape)) : null;
      const message = `unknown key "${k}"` + (guess ? ` (did you mean "${guess}"?)` : "");
      return issueAt(prov, [...path, k], message);
    });
  }
  return [issueAt(prov, path, issue.message)];
}

function getSchemaAt(root: z.ZodType, path: readonly string[]): z.ZodType | null {
  let s: z.ZodType | null = root;
  for (const p of path) {
    if (!s) return null;
    s = childSchema(s, p);
  }
  return s;
}

/** What `checkRunnable` needs to know about the launch. */
export interface RunnableContext {
  prov: Provenance;
  cwd: string;
  /** The config files that could not be read (what they would have set is not a problem). */
  unreadFiles: number;
  /** Checking only: no model is required. */
  validateOnly: boolean;
  /** The judge plugins, one per entry. */
  judges: readonly (JudgePlugin | undefined)[];
}

/**
 * The problems of a config that validated against its schema: push set, no taskset or
 * model, paths and URLs, two judges under one reward key.
 */
export function checkRunnable(config: EvalConfig, ctx: RunnableContext): ConfigIssue[] {
  const problems: ConfigIssue[] = [];
  if (config.push) {
    problems.push(
      issueAt(
        ctx.prov,
        ["push"],
        "verifiers-ts has no results upload, so push must be false (drop --push; --no-push is accepted)",
      ),
    );
  }
  // a file that could not be read is the problem; what it would have set is not
  if (!config.env.taskset.id && ctx.unreadFiles === 0) {
    const command = ctx.validateOnly ? "vf validate-config" : "vf eval";
    problems.push({
      path: "",
      message:
        `no taskset: give one as \`${command} <taskset-id>\`, --env.taskset.id, or [env.taskset] id in a file`,
    });
  }
  if (!config.model && ctx.unreadFiles === 0 && !ctx.validateOnly) {
    problems.push({
      path: "",
      message:
        "no model: pass -m/--model <name> (or --model oracle to play each task's reference solution)",
    });
  }
  problems.push(...checkPathsAndUrls(config, ctx.prov, ctx.cwd));
  const keys = new Map<string, number>();
  config.env.taskset.task.judges.forEach((j, i) => {
    const key = judgeRewardKey(j, ctx.judges[i]);
    const prev = keys.get(key);
    if (prev !== undefined) {
      problems.push({
        path: "env.taskset.task.judges",
        message: `judges ${prev} and ${i} share a reward key "${key}" (set a distinct \`name\`)`,
      });
    }
    keys.set(key, i);
  });
  return problems;
}
