/**
 * A task's own runtime needs applied to the run's runtime config, as Python's
 * `resolve_runtime_config` does (`verifiers/v1/utils/compile.py@a60a606`):
 * - `image` replaces the runtime's image; a runtime with no `image` key (no container)
 *   refuses the task;
 * - `workdir` applies only while the runtime's `workdir` is still its default;
 * - `resources` (cpu, memory, gpu, disk) apply where the runtime has the key and its value
 *   is still the default (a value the config set wins); a key the runtime lacks is
 *   ignored with one warning per runtime type and resource;
 * - a network policy (`network_allow` other than `["*"]`, or a `network_block`) composes
 *   with the runtime's `allow`/`block` as Python's `with_task_network_policy`; a runtime
 *   without those keys refuses the task.
 * The runtime's schema says which keys it has and their defaults, so nothing here knows
 * any runtime by name.
 *
 * @module
 */
import { TaskError } from "../../kit/errors.ts";
import type { RuntimeConfig, RuntimePlugin } from "../../kit/contract.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";

const RESOURCES = ["cpu", "memory", "gpu", "disk"] as const;

/** The default of a key of the runtime's schema, or `undefined` when it has no such key. */
function schemaDefault(runtime: RuntimePlugin, key: string): { has: boolean; value: unknown } {
  const field = (runtime.config.shape as Record<string, { safeParse?: unknown }>)[key];
  if (!field || typeof field.safeParse !== "function") return { has: false, value: undefined };
  const r = (field.safeParse as (v: unknown) => { success: boolean; data?: unknown })(undefined);
  return { has: true, value: r.success ? r.data : undefined };
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function stringList(value: unknown, what: string, task: TaskData): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) {
    throw new TaskError(`task ${task.idx ?? "?"}: ${what} must be a list of strings`);
  }
  return value as string[];
}

/** Python's `with_task_network_policy` (before its re-validation). */
function composePolicy(
  runtimeAllow: string[],
  runtimeBlock: string[],
  allow: string[],
  block: string[],
): { allow: string[]; block: string[] } {
  let merged: string[];
  if (allow.includes("*")) merged = runtimeAllow;
  else if (!runtimeAllow.includes("*")) {
    const mine = new Set(runtimeAllow);
    merged = allow.filter((r) => mine.has(r));
  } else merged = allow;
  return { allow: [...merged], block: [...new Set([...block, ...runtimeBlock])] };
}

/**
 * The runtime config one task runs with: `config` itself when the task asks nothing of
 * its runtime, else a copy with the task's settings applied (see the module doc). Throws
 * a TaskError for what the runtime cannot give; `warn` gets each ignored resource once
 * (`warned` remembers them across tasks).
 */
export function taskRuntimeConfig(
  runtime: RuntimePlugin,
  config: RuntimeConfig,
  task: TaskData,
  warn: (message: string) => void,
  warned: Set<string>,
): RuntimeConfig {
  const updates: Record<string, unknown> = {};
  const type = String(config.type ?? runtime.id);
  const current = config as Record<string, unknown>;
  const image = task.image;
  if (image !== undefined && image !== null) {
    if (typeof image !== "string" || image === "") {
      throw new TaskError(`task ${task.idx ?? "?"}: image must be a non-empty string`);
    }
    if (!schemaDefault(runtime, "image").has) {
      throw new TaskError(
        `task ${task.idx ?? "?"} requires image "${image}", but the ${type} runtime has no ` +
          "container; use the docker, prime or modal runtime",
      );
    }
    updates.image = image;
  }
  const workdir = task.workdir;
  if (workdir !== undefined && workdir !== null) {
    const spec = schemaDefault(runtime, "workdir");
    if (spec.has && (current.workdir === undefined || same(current.workdir, spec.value))) {
      updates.workdir = workdir;
    }
  }
  const allow = stringList(task.network_allow, "network_allow", task) ?? ["*"];
  const block = stringList(task.network_block, "network_block", task) ?? [];
  if (!allow.includes("*") || block.length > 0) {
    const a = schemaDefault(runtime, "allow");
    const b = schemaDefault(runtime, "block");
    if (!a.has || !b.has) {
      throw new TaskError(
        `task ${task.idx ?? "?"} requires a network policy, but the ${type} runtime does ` +
          "not support framework-aware policies",
      );
    }
    const policy = composePolicy(
      (current.allow ?? a.value ?? ["*"]) as string[],
      (current.block ?? b.value ?? []) as string[],
      allow,
      block,
    );
    updates.allow = policy.allow;
    updates.block = policy.block;
  }
  const resources = task.resources;
  if (resources !== undefined && resources !== null) {
    if (typeof resources !== "object" || Array.isArray(resources)) {
      throw new TaskError(`task ${task.idx ?? "?"}: resources must be an object`);
    }
    for (const key of RESOURCES) {
      const value = (resources as Record<string, unknown>)[key];
      if (value === undefined || value === null) continue;
      const spec = schemaDefault(runtime, key);
      if (!spec.has) {
        if (!warned.has(`${type}\n${key}`)) {
          warned.add(`${type}\n${key}`);
          warn(`runtime "${type}" doesn't support resource "${key}"; ignoring it`);
        }
      } else if (current[key] === undefined || same(current[key], spec.value)) {
        updates[key] = key === "gpu" && typeof value === "number" ? String(value) : value;
      }
    }
  }
  return Object.keys(updates).length ? { ...config, ...updates } : config;
}
