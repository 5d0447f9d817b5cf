/**
 * The config pipeline of `vf eval`: schema defaults < `@` files (in order) < CLI flags,
 * dicts deep-merged, an `id`/`type` change replacing its subtree; plugin ids resolved
 * and the schema narrowed to each plugin's own keys; flags typed against the narrowed
 * schema; every problem reported at once, each naming its flag or file and TOML path.
 *
 * Loading is pure: it reads the config files and loads the plugins they name, and
 * neither reads the environment (the caller passes what the defaults come from, see
 * {@link LoadEvalConfigOptions.env}) nor writes `vf.lock` (the caller that launches the
 * run saves {@link LoadedConfig.lock}).
 *
 * @module
 */
import type { z } from "zod";
import process from "node:process";
import { resolve as resolvePath } from "node:path";
import { ConfigError, type ConfigIssue } from "../../kit/errors.ts";
import { ONE_OFF_PARSE } from "../../kit/parse_config.ts";
import type { PluginLock } from "../plugins/lock.ts";
import { type ParsedArgv, tokenizeArgv } from "./argv.ts";
import { checkRunnable, describeIssue, protoKeyPaths, urlProblem } from "./config_checks.ts";
import { buildEvalConfigSchema, DEFAULT_BASE_URL, type EvalConfig } from "./eval_config.ts";
import { readConfigFile } from "./files.ts";
import { SIDECAR_HINT } from "./sidecar.ts";
import { collectIdFlags, flagLayer, plain } from "./flag_values.ts";
import { openLaunchLock, pluginIssue, resolvePluggedModules } from "./launch_lock.ts";
import { absorbPythonKeys } from "./python_compat.ts";
import { aliasPrimary, roleSections, withRoleDefaults } from "./roles.ts";
import {
  DEFAULT_ENV,
  loadNamedPlugins,
  type ResolvedPlugins,
  resolvedPlugins,
} from "./named_plugins.ts";

import { readSidecarBeside } from "./sidecar.ts";
import { wireRuntimeType } from "../../kit/runtime/wire.ts";
import { getPath, type Json, mergeConfig, nest, noneToNull } from "./merge.ts";
import { applyRootAliases, type Provenance, recordLeaves, roughPath, where } from "./provenance.ts";

export { DEFAULT_ENV, type ResolvedPlugins };

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
  /**
   * The launch's `vf.lock` (plugged `fn` modules resolve through it too). Loading never
   * writes it: the caller that launches the run calls `save()` (it writes only with `--lock`).
   */
  lock?: PluginLock;
}

/** Options of {@link loadEvalConfig}. */
export interface LoadEvalConfigOptions {
  /** Base directory for config files and plugin paths. @default process.cwd() */
  cwd?: string;
  /** Extra config layer merged under the files (e.g. from a host bridge). */
  base?: Json;
  /** Checking only (`vf validate-config`): no model is required. */
  validateOnly?: boolean;
  /**
   * The environment defaults come from: `OPENAI_BASE_URL` fills an unset `client.base_url`.
   * @default none: nothing is read, an unset base URL is `https://api.openai.com/v1`
   */
  env?: Readonly<Record<string, string | undefined>>;
}

/** What the config files say, merged in order, with where each value came from. */
interface FileLayers {
  data: unknown;
  prov: Provenance;
  unreadFiles: number;
  warnings: string[];
  /** Refusals of Python's harness keys, standing unless the harness takes the key. */
  harnessKeys: { key: string; problem: string }[];
}

/** Step 1: reads the `@` files (and their sidecars) in order over the `base` layer. */
function readFileLayers(
  parsed: ParsedArgv,
  base: Json,
  cwd: string,
  problems: ConfigIssue[],
): FileLayers {
  const prov: Provenance = { byPath: new Map() };
  let data: unknown = base;
  let unreadFiles = 0;
  for (const layer of parsed.files) {
    const file = layer.path.startsWith("/") ? layer.path : `${cwd}/${layer.path}`;
    const read = readConfigFile(file, layer.path);
    if (!read.ok) {
      problems.push({ path: "", message: read.problem, hint: read.hint });
      unreadFiles++;
      continue;
    }
    const at = roughPath(layer.at);
    const fileData = noneToNull(at.length ? read.data : applyRootAliases(read.data));
    const label = (p: string[]) => `${layer.path}: ${p.slice(at.length).join(".") || "(root)"}`;
    recordLeaves(prov, fileData, at, label);
    data = mergeConfig(data, nest(at, fileData));
    const sidecar = at.length ? undefined : readSidecarBeside(layer.path, cwd);
    if (sidecar && !sidecar.ok) {
      problems.push({ path: "", message: sidecar.problem, hint: SIDECAR_HINT });
    } else if (sidecar) data = mergeConfig(data, sidecar.data);
  }
  const absorbed = absorbPythonKeys(data as Json, (p) => where(prov, p.split(".")));
  problems.push(...absorbed.problems.map(plain));
  return {
    data,
    prov,
    unreadFiles,
    warnings: absorbed.warnings,
    harnessKeys: absorbed.harnessKeys,
  };
}

/**
 * The error of a config's problems. When each problem has a hint of its own (a file that
 * cannot be read, an output directory that cannot be made), their hints are the error's;
 * otherwise the problems keep theirs and the error points to the fields.
 */
/** The error for config problems; `command` names the command whose --help lists the fields. */
function configError(problems: ConfigIssue[], command: string): ConfigError {
  const hints = problems.map((p) => p.hint);
  if (hints.every((h) => h !== undefined)) {
    return new ConfigError(problems.map(({ path, message }) => ({ path, message })), {
      hint: [...new Set(hints)].join("; "),
    });
  }
  return new ConfigError(problems, {
    hint: `run \`${command} [<taskset>] --help\` to list the fields`,
  });
}

/**
 * The base URL of a config without one: `OPENAI_BASE_URL` from `env` when set (refused
 * when it is not an http(s) URL), else {@link DEFAULT_BASE_URL}.
 */
function defaultBaseUrl(env: Readonly<Record<string, string | undefined>> = {}): string {
  const fromEnv = env.OPENAI_BASE_URL;
  const why = fromEnv ? urlProblem(fromEnv) : null;
  if (why !== null) {
    throw new ConfigError([{ path: "OPENAI_BASE_URL", message: why }], {
      hint: `set OPENAI_BASE_URL to an http(s) URL such as ${DEFAULT_BASE_URL}`,
    });
  }
  return fromEnv || DEFAULT_BASE_URL;
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
  const problems: ConfigIssue[] = parsed.problems.map(plain);

  // 1. files, in order
  const files = readFileLayers(parsed, options.base ?? {}, cwd, problems);
  const { prov } = files;
  let fileData = files.data;

  // 2. ids from flags, then from files; the plugins they name
  const idFlags = collectIdFlags(parsed, problems);
  const lock = openLaunchLock(parsed, fileData, cwd);
  const plugins = await loadNamedPlugins(parsed, fileData, idFlags, { cwd, lock, prov });
  if (plugins.errors.length === 1 && problems.length === 0) throw plugins.errors[0];
  problems.push(...plugins.errors.map(pluginIssue));
  // Python's harness keys that this harness does not take as its own
  const harnessShape = plugins.harness?.config.shape ?? {};
  for (const { key, problem } of files.harnessKeys) {
    if (!(key in harnessShape)) problems.push(plain(problem));
  }

  // 3. the narrowed schema, then flags typed against it
  const { judgeEntries } = plugins;
  const schema = buildEvalConfigSchema({
    taskset: plugins.taskset?.config,
    harness: plugins.harness?.config,
    runtime: plugins.runtime?.config,
    env: plugins.env?.config,
    roles: Object.fromEntries(
      [
        ...(plugins.seats[0]!.role === "agent"
          ? []
          : [[plugins.seats[0]!.role, plugins.harness, plugins.runtime] as const]),
        ...plugins.roles.map((r) => [r.role, r.harness, r.runtime] as const),
      ].map(([role, h, r]) => [role, { harness: h?.config, runtime: r?.config }]),
    ),
    judges: Array.isArray(judgeEntries) ? plugins.judges.map((j) => j?.config) : undefined,
  });
  const flagData = flagLayer(parsed, schema, fileData, prov, problems);
  fileData = withRoleDefaults(fileData, plugins.env);
  for (const seat of plugins.seats) {
    const at = ["env", seat.role, "harness", "id"];
    if (!getPath(fileData, at) && !idFlags.has(at.join("."))) {
      fileData = mergeConfig(fileData, nest(at.slice(0, -1), { id: seat.harnessId }));
    }
  }
  const merged = mergeConfig(fileData, flagData);
  for (const path of protoKeyPaths(merged)) {
    problems.push({ path: where(prov, path), message: '"__proto__" cannot be a config key' });
  }

  if (parsed.help) {
    const result = schema.safeParse(merged, ONE_OFF_PARSE);
    return {
      config: (result.success ? result.data : merged) as EvalConfig,
      plugins: resolvedPlugins(plugins),
      help: true,
      schema,
    };
  }

  // 4. validation
  const result = schema.safeParse(merged, ONE_OFF_PARSE);
  if (!result.success) {
    for (const issue of result.error.issues) problems.push(...describeIssue(issue, prov, schema));
  }
  if (result.success) {
    aliasPrimary(result.data, plugins.seats, merged, problems);
    problems.push(...checkRunnable(result.data, {
      prov,
      cwd,
      unreadFiles: files.unreadFiles,
      validateOnly: options.validateOnly === true,
      judges: plugins.judges,
    }));
  }
  if (!result.success || problems.length) {
    throw configError(problems, options.validateOnly ? "vf validate-config" : "vf eval");
  }

  // 5. what the schema leaves open: the base URL, the runtime's wire name, locked modules
  const config = result.data;
  config.client.base_url ??= defaultBaseUrl(options.env);
  for (const [, seat] of roleSections(config.env as unknown as Record<string, unknown>)) {
    seat.runtime.type = wireRuntimeType(seat.runtime.type);
  }
  if (lock) await resolvePluggedModules(config, cwd, lock);
  // the runtime's rules across keys (e.g. Prime's idle_timeout <= timeout), so that
  // validate-config and --dry-run refuse what a run would
  plugins.runtime?.check?.(config.env.agent.runtime);
  return {
    config,
    plugins: resolvedPlugins(plugins),
    help: false,
    schema,
    warnings: files.warnings,
    ...(parsed.resumeDir !== undefined ? { resumeDir: resolvePath(cwd, parsed.resumeDir) } : {}),
    ...(lock ? { lock } : {}),
  };
}
