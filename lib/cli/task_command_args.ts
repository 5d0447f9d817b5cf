/**
 * The arguments of the model-free task commands (`vf validate`, `vf debug`), which take
 * Python v1's flat layout (`verifiers/v1/configs/cli/{validate,debug}.py` at a60a606):
 * `taskset` and `runtime` at the root, `--timeout.setup`/`--timeout.total`, and flags of the
 * command's own. They are read as `vf eval` reads its own, so plugins, ids, schemas, files
 * and errors are the same: root `taskset.*` is `env.taskset.*`, root `runtime.*` is
 * `env.agent.runtime.*`, and a config file in the flat layout is turned into the eval
 * layout before it is merged.
 *
 * @module
 */
import { isAbsolute, join } from "node:path";
import { ConfigError, InputError } from "../../kit/errors.ts";
import { tokenizeArgv } from "../config/argv.ts";
import { readConfigFile } from "../config/files.ts";
import { isPlainObject, type Json, mergeConfig } from "../config/merge.ts";
import { readSidecarBeside } from "../config/sidecar.ts";

/** A flag the command reads itself: a boolean, or one value. */
export type OwnFlagKind = "boolean" | "value";

/** What {@link parseTaskCommandArgs} found. */
export interface TaskCommandArgs {
  /** The arguments in `vf eval`'s layout (for `loadEvalConfig`). */
  evalArgv: string[];
  /** What the config files say, in `vf eval`'s layout (the `base` layer). */
  base: Json;
  /** The command's own flags by canonical name (`only-setup`, `timeout.total`). */
  own: Map<string, string | true>;
  /** The command's own keys the config files set (`only_setup`, `timeout.total`). */
  ownFromFiles: Map<string, unknown>;
  /** `--resume <run-dir>`: the run folder (as given). */
  resumeDir?: string;
  help: boolean;
}

/** The canonical name of a flag: no dashes, `_` read as `-`. */
function canonical(text: string): string {
  return text.replace(/^--?/, "").replaceAll("_", "-");
}

/** A flat-layout config (Python's ValidateConfig/DebugConfig dump) in the eval layout. */
function toEvalLayout(
  data: Json,
  ownKeys: ReadonlySet<string>,
  ownFromFiles: Map<string, unknown>,
): Json {
  if (isPlainObject(data.env)) return data; // already an eval config
  const out: Json = {};
  for (const [key, value] of Object.entries(data)) {
    const name = key.replaceAll("_", "-");
    if (key === "taskset") out.env = mergeConfig(out.env, { taskset: value });
    else if (key === "runtime") out.env = mergeConfig(out.env, { agent: { runtime: value } });
    else if (key === "timeout" && isPlainObject(value)) {
      for (const [k, v] of Object.entries(value)) ownFromFiles.set(`timeout.${k}`, v);
    } else if (ownKeys.has(name)) ownFromFiles.set(name, value);
    else if (key === "rich") continue; // display only (see --display)
    else out[key] = value;
  }
  return out;
}

/**
 * Parses a task command's argv. `own` names the command's flags (canonical names); `runFile`
 * is the config a run folder keeps (`validate.json`), read by `--resume <run-dir>`.
 */
export function parseTaskCommandArgs(
  argv: readonly string[],
  options: { command: string; own: Record<string, OwnFlagKind>; runFile: string; cwd: string },
): TaskCommandArgs {
  const parsed = tokenizeArgv(argv);
  const own = new Map<string, string | true>();
  const ownFromFiles = new Map<string, unknown>();
  const ownKeys = new Set(Object.keys(options.own));
  const problems: string[] = [];
  const evalArgv: string[] = [...parsed.positional];
  for (const flag of parsed.flags) {
    const name = canonical(flag.text);
    const kind = options.own[name] ?? (name.startsWith("timeout.") ? "value" : undefined);
    if (kind !== undefined) {
      if (kind === "boolean" && flag.values.length === 0) own.set(name, true);
      else if (kind === "boolean" && /^(true|1|yes)$/i.test(flag.values[0] ?? "")) {
        own.set(name, true);
      } else if (kind === "boolean" && /^(false|0|no)$/i.test(flag.values[0] ?? "")) continue;
      else if (flag.values.length === 1) own.set(name, flag.values[0]!);
      else problems.push(`${flag.text} takes ${kind === "boolean" ? "no value" : "one value"}`);
      continue;
    }
    let text = flag.text;
    if (name === "runtime") text = "--env.agent.runtime.type";
    else if (name.startsWith("runtime.")) text = `--env.agent.${flag.text.slice(2)}`;
    else if (name === "taskset" || name.startsWith("taskset.")) {
      text = name === "taskset" ? "--env.taskset.id" : `--env.${flag.text.slice(2)}`;
    } else if (name === "rich") text = "--display=rich";
    else if (name === "no-rich") text = "--display=plain";
    else if (name === "json") text = "--display=json";
    if (text.includes("=")) evalArgv.push(text);
    else if (flag.values.length === 1) evalArgv.push(`${text}=${flag.values[0]}`);
    else evalArgv.push(text, ...flag.values);
  }
  if (parsed.help) evalArgv.push("--help");
  let resumeDir: string | undefined;
  const files = parsed.files.filter((f) => f.at.length === 0).map((f) => f.path);
  if (parsed.resumeDir !== undefined) {
    resumeDir = parsed.resumeDir;
    files[0] = join(resumeDir, "configs", options.runFile); // not eval.json: this command's own
  }
  for (const f of parsed.files) {
    if (f.at.length) {
      problems.push(`${f.flag ?? "@"}: a file under a key is not read by vf ${options.command}`);
    }
  }
  let base: Json = {};
  for (const file of files) {
    const path = isAbsolute(file) ? file : join(options.cwd, file);
    const read = readConfigFile(path);
    if (!read.ok) {
      if (resumeDir !== undefined && file === files[0]) {
        throw new InputError("resume_no_run", `Cannot resume ${resumeDir}: ${read.problem}`, {
          hint: `a ${options.command} run folder holds configs/${options.runFile}`,
        });
      }
      problems.push(read.problem.replace(`${options.cwd}/`, ""));
      continue;
    }
    base = mergeConfig(base, toEvalLayout(read.data, ownKeys, ownFromFiles)) as Json;
    const sidecar = readSidecarBeside(join(path, "..", "eval.json"), options.cwd);
    if (sidecar?.ok) base = mergeConfig(base, sidecar.data) as Json;
  }
  if (problems.length) {
    throw new ConfigError(problems, {
      hint: `run \`vf ${options.command} --help\` for its usage`,
    });
  }
  return {
    evalArgv,
    base,
    own,
    ownFromFiles,
    help: parsed.help,
    ...(resumeDir !== undefined ? { resumeDir } : {}),
  };
}
