/**
 * Run naming as Python `verifiers` v1: `<taskset>--<model, "/" -> "--">--<harness>--<8 hex>`,
 * lowercased, with `<env.id>+` before the taskset when an env id is set.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { join, resolve } from "node:path";
import type { EvalConfig } from "../config/eval_config.ts";
import { configDigest, savedConfig } from "./config_dump.ts";
import { type Shard, shardDirName } from "./shard.ts";
import { normalizeId } from "../plugins/specifier.ts";

/**
 * A readable short form of a plugin id or specifier for names. An `npm:`/`jsr:` specifier
 * gives its package name without scope, range or subpath, so `npm:my-tasks@^0.1` and
 * `npm:@acme/my-tasks@^0.1` both name runs `my-tasks--...`.
 */
function shortId(id: string): string {
  const [, pkg] = /^(?:npm|jsr):\/?(?:@[^/@]+\/)?([^/@]+)/i.exec(id) ?? [];
  if (pkg !== undefined) return normalizeId(pkg).replace(/[^a-z0-9._+-]+/g, "-") || "plugin";
  const base = normalizeId(id.replace(/\/mod\.[jt]s$/, "").replace(/\.[mc]?[jt]s$/, ""));
  return base.replace(/[^a-z0-9._+-]+/g, "-") || "plugin";
}

/** The default run name for a config. */
export function defaultRunName(config: EvalConfig, hex = randomBytes(4).toString("hex")): string {
  const ts = shortId(config.env.taskset.id);
  const env = config.env.id ? `${shortId(config.env.id)}+${ts}` : ts;
  const model = (config.model ?? "no-model").replaceAll("/", "--");
  const harness = shortId(config.env.agent.harness.id);
  return `${env}--${model}--${harness}--${hex}`.toLowerCase();
}

/** Fills `run.name` and `run.dir` when unset (in place) and returns the run directory path. */
export function resolveRunDir(config: EvalConfig, cwd: string): string {
  config.run.name ??= defaultRunName(config);
  config.run.dir ??= config.run.name;
  return resolve(cwd, config.output_dir, config.run.dir);
}

/**
 * The directory of one shard: `<output_dir>/<run dir>/shard-<i>-of-<n>`. Every shard of a
 * config must land in one run directory, so an unset run name takes its 8 hex from the
 * digest of the saved config (the shard and the run's name aside), not from chance.
 */
export function resolveShardRunDir(config: EvalConfig, cwd: string, shard: Shard): string {
  config.run.name ??= sharedRunName(config);
  return join(resolveRunDir(config, cwd), shardDirName(shard));
}

/** The default run name of a config, its 8 hex from the config's digest (shard aside). */
export function sharedRunName(config: EvalConfig): string {
  const { dump, side } = savedConfig({ ...config, shard: null, run: { name: null, dir: null } });
  return defaultRunName(config, configDigest({ dump, side }).slice(0, 8));
}
