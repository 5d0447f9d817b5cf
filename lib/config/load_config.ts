/**
 * The config pipeline of `vf eval`: schema defaults < `@` files (in order) < CLI flags,
 * dicts deep-merged, an `id`/`type` change replacing its subtree; plugin ids resolved
 * and the schema narrowed to each plugin's own keys; flags typed against the narrowed
 * schema; every problem reported at once, each naming its flag or file and TOML path.
 *
 * @module
 */
import type { z } from "zod";
import process from "node:process";
import { statSync } from "node:fs";
import { dirname, resolve as resolvePath } from "node:path";
import { ConfigError, PluginError } from "../../kit/errors.ts";
import { getEnv } from "../../kit/_runtime/env.ts";
import type {
  HarnessPlugin,
  JudgePlugin,
  RuntimePlugin,
  TasksetPlugin,
} from "../../kit/contract.ts";
import { loadPlugin } from "../plugins/load.ts";
import { lockPathFor, openPluginLock, type PluginLock } from "../plugins/lock.ts";
import { loadPluggedFn } from "../rollout/plugged.ts";
import { judgeRewardKey } from "../rollout/scoring.ts";
import { type ParsedArgv, type RawFlag, tokenizeArgv } from "./argv.ts";
import {
  buildEvalConfigSchema,
  DEFAULT_BASE_URL,
  type EvalConfig,
  ROOT_ALIASES,
} from "./eval_config.ts";
import { readConfigFile } from "./files.ts";
import { absorbPythonKeys } from "./python_compat.ts";
import { readSidecarBeside } from "./sidecar.ts";
import { SUBPROCESS, wireRuntimeType } from "../../kit/runtime/wire.ts";
import {
  getPath,
  isPlainObject,
  type Json,
  MAX_CONFIG_DEPTH,
  mergeConfig,
  nest,
  nestingDepthExceeds,
  noneToNull,
  setOwn,
  setPath,
} from "./merge.ts";
import { childSchema, fieldInfo, listLeaves, objectShape } from "./schema_walk.ts";
import { closest, editDistance } from "./suggest.ts";

/** The plugins a config resolved to. */
export interface ResolvedPlugins {
  taskset: TasksetPlugin | undefined;
  harness: HarnessPlugin;
  runtime: RuntimePlugin;
  judges: JudgePlugin[];
}

/** A validated config with the plugins it names. */
export interface LoadedConfig {
  config: EvalConfig;
  plugins: ResolvedPlugins;
  /** True when `--help` was given (config may then be partial and unvalidated). */
  help: boolean;
  /** The narrowed schema (for help rendering). */
  schema: z.ZodType;
  /** The run directory named by `--resume <run-dir>` (absolute), when that form was used. */
  resumeDir?: string;
  /** Harmless Python verifiers settings that were ignored (shown before the run). */
  warnings?: string[];
  /** The launch's `vf.lock` (plugged `fn` modules resolve through it too). */
  lock?: PluginLock;
}

/** Options of {@link loadEvalConfig}. */
export interface LoadEvalConfigOptions {
  /** Base directory for config files and plugin paths. @default process.cwd() */
  cwd?: string;
  /** Extra config layer merged under the files (e.g. from a host bridge). */
  base?: Json;
  /** Checking only (`vf validate-config`): no model is required and `vf.lock` is not written. */
  validateOnly?: boolean;
}

const ID_PATHS: Record<string, string> = {
  "env.taskset.id": "taskset",
  "env.agent.harness.id": "harness",
  "env.agent.runtime.type": "runtime",
  "env.id": "env",
};

/** Flag spelling of a config path: `env.agent.max_turns` -> `--env.agent.max-turns`. */
export function flagName(path: readonly string[]): string {
  return "--" + path.map((p) => p.replaceAll("_", "-")).join(".");
}

/** The root alias of a key (`m` -> `model`), own entries only (`toString` is no alias). */
function rootAlias(key: string): string | undefined {
  return Object.hasOwn(ROOT_ALIASES, key) ? ROOT_ALIASES[key] : undefined;
}

function snake(seg: string): string {
  return seg.replaceAll("-", "_");
}

/** Normalizes typed flag segments without a schema (root alias, kebab -> snake). */
function roughPath(segments: readonly string[]): string[] {
  const out = segments.map(snake);
  if (out.length) out[0] = rootAlias(out[0]) ?? out[0];
  return out;
}

function applyRootAliases(data: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(data)) setOwn(out, rootAlias(k) ?? k, v);
  return out;
}

interface Provenance {
  /** Dotted config path -> where it was set (`--flag` or `file: toml.path`). */
  byPath: Map<string, string>;
}

function recordLeaves(
  prov: Provenance,
  value: unknown,
  path: string[],
  label: (p: string[]) => string,
) {
  prov.byPath.set(path.join("."), label(path));
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) recordLeaves(prov, v, [...path, k], label);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => recordLeaves(prov, v, [...path, String(i)], label));
  }
}

function where(prov: Provenance, path: readonly (string | number)[]): string {
  const parts = path.map(String);
  for (let n = parts.length; n > 0; n--) {
    const hit = prov.byPath.get(parts.slice(0, n).join("."));
    if (!hit) continue;
    const rest = parts.slice(n);
    if (hit.startsWith("-")) return rest.length ? `${hit} (at ${parts.join(".")})` : hit;
    return rest.length ? `${hit}.${rest.join(".")}` : hit;
  }
  return parts.length ? parts.join(".") : "config";
}

/** Reads every id the layers set; refuses the same id flag given twice with different values. */
function collectIdFlags(
  parsed: ParsedArgv,
  problems: string[],
): Map<string, { value: string; flag: string }> {
  const ids = new Map<string, { value: string; flag: string }>();
  const note = (path: string, value: string, flag: string) => {
    const prev = ids.get(path);
    if (prev && prev.value !== value) {
      const extra = path === "env.taskset.id"
        ? "; the positional <taskset-id> shorthand sets it too"
        : "";
      problems.push(
        `${flag}: ${path} given twice with different values ("${prev.value}" by ${prev.flag}, "${value}")${extra}`,
      );
      return;
    }
    ids.set(path, { value, flag });
  };
  if (parsed.positional.length > 1) {
    problems.push(
      `only one taskset id may be given positionally, got: ${parsed.positional.join(" ")}`,
    );
  }
  if (parsed.positional[0] !== undefined) {
    note("env.taskset.id", parsed.positional[0], "positional <taskset-id>");
  }
  for (const f of parsed.flags) {
    const p = roughPath(f.segments).join(".");
    if (!Object.hasOwn(ID_PATHS, p)) continue;
    if (f.values.length !== 1 || f.values[0] === "") {
      problems.push(`${f.text} needs an id, and none was given`);
      continue;
    }
    note(p, f.values[0], f.text);
  }
  return ids;
}

/** The direct fields of a group, as flags (sub-groups end in `.*`). */
function listGroupLeaves(schema: z.ZodType, path: string[]): string {
  const shape = objectShape(schema) ?? {};
  const names = Object.entries(shape).map(([k, v]) =>
    flagName([...path, k]) + (objectShape(v) ? ".*" : "")
  );
  const shown = names.slice(0, 12).join(", ");
  return names.length > 12 ? `${shown}, ... (${names.length} in all)` : shown;
}

/** Types one flag's string values against the schema at its path. */
function coerceFlag(
  flag: RawFlag,
  root: z.ZodType,
  problems: string[],
): { path: string[]; value: unknown } | null {
  const path: string[] = [];
  let schema: z.ZodType = root;
  const typed = flag.segments;
  for (let i = 0; i < typed.length; i++) {
    const info = fieldInfo(schema);
    let seg = typed[i];
    if (info.kind === "object") {
      seg = snake(seg);
      if (i === 0) seg = rootAlias(seg) ?? seg;
    }
    const child = childSchema(schema, seg);
    if (!child) {
      // `--no-x` for a boolean leaf x
      if (i === typed.length - 1 && /^no[-_]/.test(typed[i]) && flag.values.length === 0) {
        const base = snake(typed[i].slice(3));
        const target = childSchema(schema, i === 0 ? rootAlias(base) ?? base : base);
        if (target && fieldInfo(target).kind === "boolean") {
          return { path: [...path, i === 0 ? rootAlias(base) ?? base : base], value: false };
        }
      }
      if (info.kind === "object") {
        const known = listLeaves(root).map((l) => flagName(l.path));
        const typedName = flagName([...roughPath(typed)]);
        let guess = closest(typedName, known);
        // a typo is judged on the flag's last part, not the whole path it shares
        const leaf = typed[typed.length - 1] ?? "";
        if (guess && editDistance(typedName, guess) > Math.max(2, Math.floor(leaf.length / 3))) {
          guess = null;
        }
        problems.push(
          `unknown flag ${flag.text}` + (guess ? ` (did you mean ${guess}?)` : "") +
            (!guess && path.length
              ? `; ${flagName(path)} has: ${listGroupLeaves(schema, path)}`
              : ""),
        );
      } else if ((info.kind === "tuple" || info.kind === "array") && /^\d+$/.test(seg)) {
        problems.push(
          `${flag.text}: ${flagName(path)} has no entry ${seg} in the config files; a flag sets ` +
            `a field of an entry they define (give the whole list as JSON to add one)`,
        );
      } else {
        problems.push(`${flag.text}: ${flagName(path)} is not a group (it is a ${info.kind})`);
      }
      return null;
    }
    path.push(seg);
    schema = child;
  }
  return coerceValue(flag, path, schema, problems);
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function scalar(kind: string, raw: string, flag: string, problems: string[]): unknown {
  if (raw === "None") return null;
  switch (kind) {
    case "boolean": {
      const v = raw.toLowerCase();
      if (["true", "1", "yes"].includes(v)) return true;
      if (["false", "0", "no"].includes(v)) return false;
      problems.push(`${flag}: expected true or false, got "${raw}"`);
      return undefined;
    }
    case "int":
    case "number": {
      const n = Number(raw);
      if (raw.trim() === "" || Number.isNaN(n)) {
        problems.push(
          `${flag}: expected ${kind === "int" ? "an integer" : "a number"}, got "${raw}"`,
        );
        return undefined;
      }
      return n;
    }
    case "string":
    case "enum":
    case "literal":
      return raw;
    default: {
      const j = parseJson(raw);
      return j.ok ? j.value : raw;
    }
  }
}

function coerceValue(
  flag: RawFlag,
  path: string[],
  schema: z.ZodType,
  problems: string[],
): { path: string[]; value: unknown } | null {
  const info = fieldInfo(schema);
  const vals = flag.values;
  const before = problems.length;
  const size = vals.reduce((n, v) => n + v.length, 0);
  if (size > MAX_FLAG_VALUE_CHARS) {
    problems.push(
      `${flag.text}: value of ${size} characters is longer than the limit of ${MAX_FLAG_VALUE_CHARS}`,
    );
    return null;
  }
  if (info.kind === "object" && !(vals.length === 1 && vals[0].trim().startsWith("{"))) {
    problems.push(
      `${flag.text} is a config group, not a leaf field. Try one of: ${
        listGroupLeaves(schema, path)
      }`,
    );
    return null;
  }
  if (info.kind === "boolean" && vals.length === 0) return { path, value: true };
  if (vals.length === 0) {
    problems.push(`${flag.text} needs a value`);
    return null;
  }
  let value: unknown;
  if (info.kind === "array" || info.kind === "tuple") {
    if (vals.length === 1 && vals[0].trim().startsWith("[")) {
      const j = parseJson(vals[0]);
      if (!j.ok) problems.push(`${flag.text}: invalid JSON list: ${vals[0]}`);
      value = j.ok ? j.value : undefined;
    } else if (vals.length === 1 && vals[0] === "None") value = null;
    else {
      const el = childSchema(schema, "0");
      const elKind = el ? fieldInfo(el).kind : "unknown";
      value = vals.map((v) => scalar(elKind, v, flag.text, problems));
    }
  } else if (info.kind === "object" || info.kind === "record") {
    const j = parseJson(vals[0]);
    if (vals.length !== 1 || !j.ok || !isPlainObject(j.value)) {
      problems.push(`${flag.text}: expected a JSON object, got ${vals.join(" ")}`);
      return null;
    }
    value = j.value;
  } else {
    if (vals.length > 1) {
      problems.push(`${flag.text} takes one value, got ${vals.length}: ${vals.join(" ")}`);
      return null;
    }
    value = scalar(info.kind, vals[0], flag.text, problems);
  }
  if (problems.length === before && nestingDepthExceeds(value, MAX_CONFIG_DEPTH)) {
    problems.push(`${flag.text}: value is nested more than ${MAX_CONFIG_DEPTH} levels deep`);
  }
  return problems.length > before ? null : { path, value };
}

/**
 * Paths of every `__proto__` key in config data. Such a key is kept as plain data by the
 * merge, but zod drops it silently from records, so it is refused instead.
 */
function protoKeyPaths(data: unknown): string[][] {
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

/** Longest value (all of one flag's values together) a flag takes. */
const MAX_FLAG_VALUE_CHARS = 1024 * 1024;
/** Longest `run.name` / `run.dir` segment, in bytes (the usual file name limit). */
const MAX_NAME_BYTES = 255;

/** Why `text` is not an http(s) URL, or null when it is one. */
function urlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `"${clip(text)}" is not a URL (expected http:// or https://...)`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `"${clip(text)}" is not an http(s) URL (scheme ${url.protocol})`;
  }
  return null;
}

/** A user value cut short for a message. */
function clip(text: string): string {
  const shown = text.length > 60 ? `${text.slice(0, 60)}... (${text.length} characters)` : text;
  // deno-lint-ignore no-control-regex
  return shown.replace(/[\x00-\x1f\x7f]/g, "?");
}

/**
 * Why a run name cannot be a directory name under output_dir, or null. `run.dir` (a path,
 * which may point anywhere as in Python verifiers) is only checked for NUL characters and
 * over-long segments (`isPath`).
 */
function nameProblem(name: string, isPath: boolean): string | null {
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x1f\x7f]/.test(name)) return `"${clip(name)}" contains a control character`;
  if (!isPath) {
    if (name === "") return "a run name cannot be empty";
    if (/[/\\]/.test(name)) {
      return `"${clip(name)}" contains a path separator; a run name is one directory name`;
    }
    if (name === ".." || name === ".") {
      return `"${clip(name)}" would name the output directory or its parent, not a run directory`;
    }
  }
  for (const part of isPath ? name.split("/") : [name]) {
    if (new TextEncoder().encode(part).length > MAX_NAME_BYTES) {
      return `"${clip(name)}" is longer than ${MAX_NAME_BYTES} bytes`;
    }
  }
  return null;
}

/**
 * Refuses run names that would escape or break the output directory, an output directory
 * below something that is not a directory, and base URLs that are not http(s) URLs.
 */
function checkPathsAndUrls(config: EvalConfig, prov: Provenance, cwd: string): string[] {
  const problems: string[] = [];
  const name = config.run.name;
  if (name !== null) {
    const why = nameProblem(name, false);
    if (why) problems.push(`${where(prov, ["run", "name"])}: ${why}`);
  }
  const dir = config.run.dir;
  if (dir !== null) {
    const why = nameProblem(dir.replace(/\\/g, "/"), true);
    if (why) problems.push(`${where(prov, ["run", "dir"])}: ${why}`);
  }
  const outDir = resolvePath(cwd, config.output_dir);
  const blocker = nonDirectoryAncestor(outDir);
  if (blocker !== null) {
    problems.push(
      `${where(prov, ["output_dir"])}: cannot use ${outDir} as the output directory: ` +
        `${blocker} is not a directory`,
    );
  }
  if (config.client.base_url !== null) {
    const why = urlProblem(config.client.base_url);
    if (why) problems.push(`${where(prov, ["client", "base_url"])}: ${why}`);
  }
  config.env.taskset.task.judges.forEach((j, i) => {
    if (j.base_url === null || j.base_url === undefined) return;
    const why = urlProblem(j.base_url);
    if (why) {
      problems.push(
        `${where(prov, ["env", "taskset", "task", "judges", String(i), "base_url"])}: ${why}`,
      );
    }
  });
  return problems;
}

/** The nearest existing ancestor of `path` (itself included) when it is not a directory. */
function nonDirectoryAncestor(path: string): string | null {
  let cur = path;
  for (;;) {
    try {
      return statSync(cur).isDirectory() ? null : cur;
    } catch {
      const up = dirname(cur);
      if (up === cur) return null;
      cur = up;
    }
  }
}

function describeIssue(issue: z.core.$ZodIssue, prov: Provenance, schema: z.ZodType): string[] {
  const path = issue.path.map(String);
  if (issue.code === "unrecognized_keys") {
    const parent = path.length ? getSchemaAt(schema, path) : schema;
    const shape = parent ? objectShape(parent) : null;
    return issue.keys.map((k) => {
      const guess = shape ? closest(k, Object.keys(shape)) : null;
      const loc = where(prov, [...path, k]);
      return `${loc}: unknown key "${k}"` + (guess ? ` (did you mean "${guess}"?)` : "");
    });
  }
  return [`${where(prov, path)}: ${issue.message}`];
}

function getSchemaAt(root: z.ZodType, path: readonly string[]): z.ZodType | null {
  let s: z.ZodType | null = root;
  for (const p of path) {
    if (!s) return null;
    s = childSchema(s, p);
  }
  return s;
}

async function tryLoad<T>(fn: () => Promise<T>, errors: PluginError[]): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof PluginError) {
      errors.push(err);
      return undefined;
    }
    throw err;
  }
}

/** A launch switch (`--lock`, `--frozen`): a flag (`--x`, `--x=true`, `--no-x`) or the files. */
function launchSwitch(parsed: ParsedArgv, fileData: unknown, name: string): boolean {
  let value = getPath(fileData, [name]) === true;
  for (const f of parsed.flags) {
    const p = roughPath(f.segments).join(".");
    if (p === name) value = f.values.length === 0 || /^(true|1|yes)$/i.test(f.values[0]);
    if (p === `no_${name}` && f.values.length === 0) value = false;
  }
  return value;
}

/** The `vf.lock` of this launch (beside the first config file), per `--lock` / `--frozen`. */
function openLaunchLock(parsed: ParsedArgv, fileData: unknown, cwd: string) {
  const files = (parsed.resumeDir !== undefined ? parsed.files.slice(1) : parsed.files)
    .filter((f) => f.at.length === 0).map((f) => f.path);
  return openPluginLock(lockPathFor(files, cwd), {
    lock: launchSwitch(parsed, fileData, "lock"),
    frozen: launchSwitch(parsed, fileData, "frozen"),
  });
}

/**
 * Parses `vf eval` arguments into a validated, plugin-narrowed config.
 * Throws {@link ConfigError} listing every problem, or {@link PluginError}.
 */
export async function loadEvalConfig(
  argv: readonly string[],
  options: LoadEvalConfigOptions = {},
): Promise<LoadedConfig> {
  const cwd = options.cwd ?? process.cwd();
  const parsed = tokenizeArgv(argv);
  const problems = [...parsed.problems];
  const prov: Provenance = { byPath: new Map() };

  // 1. files, in order
  let fileData: unknown = options.base ?? {};
  let unreadFiles = 0;
  for (const layer of parsed.files) {
    const read = readConfigFile(layer.path.startsWith("/") ? layer.path : `${cwd}/${layer.path}`);
    if (!read.ok) {
      problems.push(read.problem.replace(`${cwd}/`, ""));
      unreadFiles++;
      continue;
    }
    const at = roughPath(layer.at);
    const data = noneToNull(at.length ? read.data : applyRootAliases(read.data));
    const label = (p: string[]) => `${layer.path}: ${p.slice(at.length).join(".") || "(root)"}`;
    recordLeaves(prov, data, at, label);
    fileData = mergeConfig(fileData, nest(at, data));
    const sidecar = at.length ? undefined : readSidecarBeside(layer.path, cwd);
    if (sidecar && !sidecar.ok) problems.push(sidecar.problem);
    else if (sidecar) fileData = mergeConfig(fileData, sidecar.data);
  }
  const absorbed = absorbPythonKeys(fileData as Json, (p) => where(prov, p.split(".")));
  problems.push(...absorbed.problems);

  // 2. ids from flags, then from files
  const idFlags = collectIdFlags(parsed, problems);
  const idOf = (path: string): string | undefined => {
    const f = idFlags.get(path);
    if (f) return f.value;
    const v = getPath(fileData, path.split("."));
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  const tasksetId = idOf("env.taskset.id");
  const pluginErrors: PluginError[] = [];
  const lock = openLaunchLock(parsed, fileData, cwd);
  const loadOpts = { cwd, lock };
  const taskset = tasksetId
    ? await tryLoad(() => loadPlugin("taskset", tasksetId, loadOpts), pluginErrors)
    : undefined;
  const harnessId = idOf("env.agent.harness.id") ?? taskset?.defaultHarness ?? "bash";
  const runtimeType = idOf("env.agent.runtime.type") ?? SUBPROCESS;
  const judgeFlag = parsed.flags.find((f) =>
    roughPath(f.segments).join(".") === "env.taskset.task.judges"
  );
  let judgeEntries = getPath(fileData, ["env", "taskset", "task", "judges"]);
  if (judgeFlag && judgeFlag.values.length === 1) {
    const j = parseJson(judgeFlag.values[0]);
    if (j.ok) judgeEntries = j.value;
  }
  const judgeIds = Array.isArray(judgeEntries)
    ? judgeEntries.map((e) => (isPlainObject(e) && typeof e.id === "string" ? e.id : undefined))
    : [];
  const [harness, runtime, judges] = await Promise.all([
    tryLoad(() => loadPlugin("harness", harnessId, loadOpts), pluginErrors),
    tryLoad(() => loadPlugin("runtime", runtimeType, loadOpts), pluginErrors),
    Promise.all(
      judgeIds.map((id) =>
        id ? tryLoad(() => loadPlugin("judge", id, loadOpts), pluginErrors) : undefined
      ),
    ),
  ]);
  if (pluginErrors.length === 1 && problems.length === 0) throw pluginErrors[0];
  for (const e of pluginErrors) problems.push(e.message + (e.hint ? ` (hint: ${e.hint})` : ""));

  // 3. the narrowed schema, then flags typed against it
  const schema = buildEvalConfigSchema({
    taskset: taskset?.config,
    harness: harness?.config,
    runtime: runtime?.config,
    judges: Array.isArray(judgeEntries) ? judges.map((j) => j?.config) : undefined,
  });
  let flagData: unknown = {};
  for (const flag of parsed.flags) {
    const typed = coerceFlag(flag, schema, problems);
    if (!typed) continue;
    const key = typed.path.join(".");
    prov.byPath.set(key, flag.text);
    recordLeaves(prov, typed.value, typed.path, () => flag.text);
    const existing = getPath(flagData, typed.path);
    let value = typed.value;
    if (
      Array.isArray(existing) && Array.isArray(value) && !flag.values[0]?.trim().startsWith("[")
    ) {
      value = [...existing, ...value];
    }
    const next = isPlainObject(flagData) ? flagData : {};
    // `--a.list.0.field v`: the flag edits a copy of the files' list in place
    typed.path.forEach((seg, i) => {
      const list = /^\d+$/.test(seg) ? getPath(fileData, typed.path.slice(0, i)) : undefined;
      if (Array.isArray(list) && !Array.isArray(getPath(next, typed.path.slice(0, i)))) {
        setPath(next, typed.path.slice(0, i), structuredClone(list));
      }
    });
    if (isPlainObject(value) && isPlainObject(existing)) value = mergeConfig(existing, value);
    setPath(next, typed.path, value);
    flagData = next;
  }
  if (parsed.positional[0] !== undefined) {
    setPath(flagData as Json, ["env", "taskset", "id"], parsed.positional[0]);
    prov.byPath.set("env.taskset.id", "positional <taskset-id>");
  }
  if (
    !getPath(fileData, ["env", "agent", "harness", "id"]) && !idFlags.has("env.agent.harness.id")
  ) {
    fileData = mergeConfig(fileData, { env: { agent: { harness: { id: harnessId } } } });
  }
  const merged = mergeConfig(fileData, flagData);
  for (const path of protoKeyPaths(merged)) {
    problems.push(`${where(prov, path)}: "__proto__" cannot be a config key`);
  }

  if (parsed.help) {
    const result = schema.safeParse(merged);
    return {
      config: (result.success ? result.data : merged) as EvalConfig,
      plugins: {
        taskset,
        harness: harness!,
        runtime: runtime!,
        judges: judges.filter((j) => j) as JudgePlugin[],
      },
      help: true,
      schema,
    };
  }

  // 4. validation
  const result = schema.safeParse(merged);
  if (!result.success) {
    for (const issue of result.error.issues) problems.push(...describeIssue(issue, prov, schema));
  }
  const config = result.success ? result.data as EvalConfig : undefined;
  if (config) {
    if (config.push) {
      problems.push(
        `${where(prov, ["push"])}: verifiers-ts has no results upload, so push must be false ` +
          "(drop --push; --no-push is accepted)",
      );
    }
    // a file that could not be read is the problem; what it would have set is not
    if (!config.env.taskset.id && unreadFiles === 0) {
      problems.push(
        "no taskset: give one as `vf eval <taskset-id>`, --env.taskset.id, or [env.taskset] id in a file",
      );
    }
    if (!config.model && unreadFiles === 0 && !options.validateOnly) {
      problems.push(
        "no model: pass -m/--model <name> (or --model oracle to play each task's reference solution)",
      );
    }
    problems.push(...checkPathsAndUrls(config, prov, cwd));
    const keys = new Map<string, number>();
    config.env.taskset.task.judges.forEach((j, i) => {
      const key = judgeRewardKey(j, judges[i]);
      const prev = keys.get(key);
      if (prev !== undefined) {
        problems.push(
          `env.taskset.task.judges: judges ${prev} and ${i} share a reward key "${key}" (set a distinct \`name\`)`,
        );
      }
      keys.set(key, i);
    });
  }
  if (problems.length) {
    throw new ConfigError(problems, {
      hint: unreadFiles === problems.length
        ? "fix the config file (the line:column is given), then run the command again"
        : "run `vf eval [<taskset>] --help` to list the fields",
    });
  }
  const resolved = config!;
  if (resolved.client.base_url === null) {
    const fromEnv = getEnv("OPENAI_BASE_URL");
    if (fromEnv && urlProblem(fromEnv) !== null) {
      throw new ConfigError([`OPENAI_BASE_URL: ${urlProblem(fromEnv)}`], {
        hint: `set OPENAI_BASE_URL to an http(s) URL such as ${DEFAULT_BASE_URL}`,
      });
    }
    resolved.client.base_url = fromEnv || DEFAULT_BASE_URL;
  }
  resolved.env.agent.runtime.type = wireRuntimeType(resolved.env.agent.runtime.type);
  if (lock) await resolvePluggedModules(resolved, cwd, lock);
  if (!options.validateOnly) lock?.save();
  return {
    config: resolved,
    plugins: { taskset, harness: harness!, runtime: runtime!, judges: judges as JudgePlugin[] },
    help: false,
    schema,
    warnings: absorbed.warnings,
    ...(parsed.resumeDir !== undefined ? { resumeDir: resolvePath(cwd, parsed.resumeDir) } : {}),
    ...(lock ? { lock } : {}),
  };
}

/**
 * Resolves every fetched (`npm:`, `jsr:`, URL) module named by a plugged reward, metric
 * or stop `fn` through the lock now, so `--lock` records them and `--frozen` refuses a
 * change before the run starts. The run later imports them through the same lock.
 */
async function resolvePluggedModules(config: EvalConfig, cwd: string, lock: PluginLock) {
  const task = config.env.taskset.task;
  const fns = [task.rewards, task.metrics, task.stops]
    .flatMap((plugs) => Object.values(plugs ?? {}))
    .map((plug) => plug.fn)
    .filter((fn): fn is string => typeof fn === "string" && /^(npm|jsr|https?):/i.test(fn));
  const problems: string[] = [];
  for (const fn of new Set(fns)) {
    try {
      await loadPluggedFn(fn, { cwd, lock });
    } catch (err) {
      if (err instanceof PluginError && /^plugin_lock|^plugin_integrity/.test(errCode(err))) {
        problems.push(err.message + (err.hint ? ` (hint: ${err.hint})` : ""));
      }
    }
  }
  if (problems.length) {
    throw new ConfigError(problems, { hint: "the plugged functions' modules are locked too" });
  }
}

function errCode(err: PluginError): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof PluginError ? cause.code : err.code;
}
