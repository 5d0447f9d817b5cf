/**
 * Which plugins a config names: the ids from the flags, else the files (the env first, then
 * its roles' harnesses and runtimes, the taskset and the judges), and the plugins loaded
 * for them, each failure collected with the flag or `file: toml.path` that named the id.
 *
 * @module
 */
import { PluginError } from "../../kit/errors.ts";
import type {
  HarnessPlugin,
  JudgePlugin,
  RuntimePlugin,
  TasksetPlugin,
} from "../../kit/contract.ts";
import type { EnvPlugin } from "../../kit/env_contract.ts";
import { loadPlugin } from "../plugins/load.ts";
import type { PluginLock } from "../plugins/lock.ts";
import type { ParsedArgv } from "./argv.ts";
import type { collectIdFlags } from "./flag_values.ts";
import { parseJson } from "./flag_values.ts";
import { SUBPROCESS } from "../../kit/runtime/wire.ts";
import { getPath, isPlainObject } from "./merge.ts";
import { type Provenance, roughPath, where } from "./provenance.ts";
import { type RoleSeat, roleSeats } from "./roles.ts";

/** The plugins a config resolved to. */
export interface ResolvedPlugins {
  taskset: TasksetPlugin | undefined;
  harness: HarnessPlugin;
  runtime: RuntimePlugin;
  judges: JudgePlugin[];
  /** The env `env.id` names (`single-agent` when it is empty). */
  env: EnvPlugin;
  /** Each role's harness and runtime, in the env's order (the first is `env.agent`'s). */
  roles: Record<string, { harness: HarnessPlugin; runtime: RuntimePlugin }>;
}

/** The env of a config whose `env.id` is empty (Python's `SingleAgentEnv`). */
export const DEFAULT_ENV = "single-agent";

/**
 * Runs a plugin load; a {@link PluginError} is collected (prefixed with `source`, the flag
 * or `file: toml.path` that named the id, when one did) instead of thrown.
 */
async function tryLoad<T>(
  fn: () => Promise<T>,
  errors: PluginError[],
  source?: string,
): Promise<T | undefined> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof PluginError) {
      errors.push(
        source === undefined ? err : new PluginError(err.code, `${source}: ${err.message}`, {
          ...(err.hint === undefined ? {} : { hint: err.hint }),
          cause: err,
        }),
      );
      return undefined;
    }
    throw err;
  }
}

/** The plugins the ids name (undefined where one failed to load), and the judge entries. */
export interface LoadedPlugins {
  taskset: TasksetPlugin | undefined;
  harness: HarnessPlugin | undefined;
  runtime: RuntimePlugin | undefined;
  judges: (JudgePlugin | undefined)[];
  env: EnvPlugin | undefined;
  harnessId: string;
  judgeEntries: unknown;
  errors: PluginError[];
  /** The env's roles (the first is also `env.agent`). */
  seats: RoleSeat[];
  /** The plugins of the roles after the first. */
  roles: {
    role: string;
    harness?: HarnessPlugin | undefined;
    runtime?: RuntimePlugin | undefined;
  }[];
}

/** Step 2: the ids from the flags, else the files; then the plugins they name. */
export async function loadNamedPlugins(
  parsed: ParsedArgv,
  fileData: unknown,
  idFlags: ReturnType<typeof collectIdFlags>,
  options: { cwd: string; lock: PluginLock | undefined; prov: Provenance },
): Promise<LoadedPlugins> {
  const idOf = (path: string): string | undefined => {
    const f = idFlags.get(path);
    if (f) return f.value;
    const v = getPath(fileData, path.split("."));
    return typeof v === "string" && v !== "" ? v : undefined;
  };
  /** Where an id was set: its flag, else its file and TOML path (undefined: defaulted). */
  const sourceOf = (path: string): string | undefined => {
    const f = idFlags.get(path);
    // the positional <taskset-id> is plain from the message itself
    if (f) return f.flag.startsWith("-") ? f.flag : undefined;
    const segments = path.split(".");
    return getPath(fileData, segments) === undefined ? undefined : where(options.prov, segments);
  };
  const errors: PluginError[] = [];
  const envId = idOf("env.id") ?? DEFAULT_ENV;
  const env = await tryLoad(() => loadPlugin("env", envId, options), errors, sourceOf("env.id"));
  const tasksetId = idOf("env.taskset.id");
  const taskset = tasksetId
    ? await tryLoad(
      () => loadPlugin("taskset", tasksetId, options),
      errors,
      sourceOf("env.taskset.id"),
    )
    : undefined;
  const seats = roleSeats(env, idOf, {
    harnessId: idOf("env.agent.harness.id") ?? taskset?.defaultHarness ?? "bash",
    runtimeType: idOf("env.agent.runtime.type") ?? SUBPROCESS,
  });
  const { harnessId, runtimeType, path: seatPath } = seats[0]!;
  const judgeFlag = parsed.flags.find((f) =>
    roughPath(f.segments).join(".") === "env.taskset.task.judges"
  );
  let judgeEntries = getPath(fileData, ["env", "taskset", "task", "judges"]);
  const [judgeText, ...moreJudgeValues] = judgeFlag?.values ?? [];
  if (judgeText !== undefined && moreJudgeValues.length === 0) {
    const j = parseJson(judgeText);
    if (j.ok) judgeEntries = j.value;
  }
  const judgeIds = Array.isArray(judgeEntries)
    ? judgeEntries.map((e) => (isPlainObject(e) && typeof e.id === "string" ? e.id : undefined))
    : [];
  const [harness, runtime, judges, roles] = await Promise.all([
    tryLoad(
      () => loadPlugin("harness", harnessId, options),
      errors,
      sourceOf(`${seatPath}.harness.id`),
    ),
    tryLoad(
      () => loadPlugin("runtime", runtimeType, options),
      errors,
      sourceOf(`${seatPath}.runtime.type`),
    ),
    Promise.all(
      judgeIds.map((id) =>
        id ? tryLoad(() => loadPlugin("judge", id, options), errors) : undefined
      ),
    ),
    Promise.all(
      seats.slice(1).map(async (seat) => ({
        role: seat.role,
        harness: await tryLoad(
          () => loadPlugin("harness", seat.harnessId, options),
          errors,
          sourceOf(`${seat.path}.harness.id`),
        ),
        runtime: await tryLoad(
          () => loadPlugin("runtime", seat.runtimeType, options),
          errors,
          sourceOf(`${seat.path}.runtime.type`),
        ),
      })),
    ),
  ]);
  return { taskset, harness, runtime, judges, env, harnessId, judgeEntries, errors, seats, roles };
}

/** The plugins of a config that loaded them all. */
export function resolvedPlugins(p: LoadedPlugins): ResolvedPlugins {
  return {
    taskset: p.taskset,
    harness: p.harness!,
    runtime: p.runtime!,
    judges: p.judges.filter((j): j is JudgePlugin => j !== undefined),
    env: p.env!,
    roles: Object.fromEntries([
      [p.seats[0]!.role, { harness: p.harness!, runtime: p.runtime! }],
      ...p.roles.map((r) => [r.role, { harness: r.harness!, runtime: r.runtime! }]),
    ]),
  };
}
