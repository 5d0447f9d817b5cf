/**
 * The launch's `vf.lock` (beside the first config file): opened per `--lock`/`--frozen`
 * while plugins load, checked against the fetched modules plugged `fn`s name, and saved
 * by the caller that launches the run (the CLI, `startEval`), never by loading a config.
 *
 * @module
 */
import { ConfigError, type ConfigIssue, PluginError } from "../../kit/errors.ts";
import { lockPathFor, openPluginLock, type PluginLock } from "../plugins/lock.ts";
import { loadPluggedFn } from "../plugins/plugged.ts";
import type { ParsedArgv } from "./argv.ts";
import type { EvalConfig } from "./eval_config.ts";
import { getPath } from "./merge.ts";
import { roughPath } from "./provenance.ts";

/** A plugin that cannot load, as a config problem (its hint kept as data). */
export function pluginIssue(err: PluginError): ConfigIssue {
  return err.hint
    ? { path: "", message: err.message, hint: err.hint }
    : { path: "", message: err.message };
}

/** A launch switch (`--lock`, `--frozen`): a flag (`--x`, `--x=true`, `--no-x`) or the files. */
function launchSwitch(parsed: ParsedArgv, fileData: unknown, name: string): boolean {
  let value = getPath(fileData, [name]) === true;
  for (const f of parsed.flags) {
    const p = roughPath(f.segments).join(".");
    if (p === name) value = f.values.length === 0 || /^(true|1|yes)$/i.test(f.values[0] ?? "");
    if (p === `no_${name}` && f.values.length === 0) value = false;
  }
  return value;
}

/** The `vf.lock` of this launch (beside the first config file), per `--lock` / `--frozen`. */
export function openLaunchLock(
  parsed: ParsedArgv,
  fileData: unknown,
  cwd: string,
): PluginLock | undefined {
  const files = (parsed.resumeDir !== undefined ? parsed.files.slice(1) : parsed.files)
    .filter((f) => f.at.length === 0).map((f) => f.path);
  return openPluginLock(lockPathFor(files, cwd), {
    lock: launchSwitch(parsed, fileData, "lock"),
    frozen: launchSwitch(parsed, fileData, "frozen"),
  });
}

/**
 * Resolves every fetched (`npm:`, `jsr:`, URL) module named by a plugged reward, metric
 * or stop `fn` through the lock now, so `--lock` records them and `--frozen` refuses a
 * change before the run starts. The run later imports them through the same lock.
 */
export async function resolvePluggedModules(
  config: EvalConfig,
  cwd: string,
  lock: PluginLock,
): Promise<void> {
  const task = config.env.taskset.task;
  const fns = [task.rewards, task.metrics, task.stops]
    .flatMap((plugs) => Object.values(plugs ?? {}))
    .map((plug) => plug.fn)
    .filter((fn): fn is string => typeof fn === "string" && /^(npm|jsr|https?):/i.test(fn));
  const problems: ConfigIssue[] = [];
  for (const fn of new Set(fns)) {
    try {
      await loadPluggedFn(fn, { cwd, lock });
    } catch (err) {
      if (err instanceof PluginError && /^plugin_lock|^plugin_integrity/.test(errCode(err))) {
        problems.push(pluginIssue(err));
      }
    }
  }
  if (problems.length) {
    throw new ConfigError(problems, { hint: "the plugged functions' modules are locked too" });
  }
}

/** The code of a plugin error, or of the plugin error that caused it. */
function errCode(err: PluginError): string {
  return err.cause instanceof PluginError ? err.cause.code : err.code;
}
