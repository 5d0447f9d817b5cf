/**
 * The roles of a config's env as config sections: each role `r` is configured at
 * `env.<r>` (Python's role fields of an env config, verifiers/v1/configs/env.py@a60a606),
 * over the role's own defaults. The env's first role is also `env.agent`, the seat the
 * rest of the engine reads (the run's harness, runtime and naming).
 *
 * @module
 */
import type { ConfigIssue } from "../../kit/errors.ts";
import { type EnvPlugin, envRoles } from "../../kit/env_contract.ts";
import type { EvalConfig } from "./eval_config.ts";
import { getPath, isPlainObject, type Json, mergeConfig } from "./merge.ts";

/** One role's section and the plugin ids it names. */
export interface RoleSeat {
  role: string;
  /** Its config path (`env.<role>`). */
  path: string;
  harnessId: string;
  runtimeType: string;
}

/** A seat's section after validation (`env.agent`, `env.<role>`). */
export type Seat = EvalConfig["env"]["agent"];

/** The env's roles, each with the ids its section names (`idOf` reads flags, then files). */
export function roleSeats(
  env: EnvPlugin | undefined,
  idOf: (path: string) => string | undefined,
  fallback: { harnessId: string; runtimeType: string },
): RoleSeat[] {
  return envRoles(env ?? {}).map(([role, spec]) => {
    const path = `env.${role}`;
    const own = getPath(spec.defaults, ["harness", "id"]);
    return {
      role,
      path,
      harnessId: idOf(`${path}.harness.id`) ??
        (typeof own === "string" ? own : fallback.harnessId),
      runtimeType: idOf(`${path}.runtime.type`) ?? fallback.runtimeType,
    };
  });
}

/** The roles' defaults as a config layer under the files (`{env: {<role>: defaults}}`). */
export function roleDefaults(env: EnvPlugin | undefined): Json {
  const layer: Record<string, unknown> = {};
  for (const [role, spec] of envRoles(env ?? {})) {
    if (spec.defaults) layer[role] = structuredClone(spec.defaults);
  }
  return Object.keys(layer).length ? { env: layer } as Json : {};
}

/** Merges the roles' defaults under `data` (the files and flags win). */
export function withRoleDefaults(data: unknown, env: EnvPlugin | undefined): unknown {
  const layer = roleDefaults(env);
  return Object.keys(layer).length ? mergeConfig(layer, data) : data;
}

/**
 * When the env's first role is not `agent`, `env.agent` is that role's section: input at
 * `env.agent` is refused (the env has no such role) and the section is aliased.
 */
export function aliasPrimary(
  config: EvalConfig,
  seats: readonly RoleSeat[],
  input: unknown,
  problems: ConfigIssue[],
): void {
  const primary = seats[0];
  if (!primary || primary.role === "agent") return;
  const given = getPath(input, ["env", "agent"]);
  if (isPlainObject(given) && Object.keys(given).length) {
    problems.push({
      path: "env.agent",
      message: `env ${JSON.stringify(config.env.id)} has no role "agent"`,
      hint: `its roles are ${seats.map((s) => s.path).join(", ")}`,
    });
  }
  const env = config.env as unknown as Record<string, Seat>;
  env.agent = env[primary.role]!;
}

/** The role sections of a resolved `[env]` table: its values shaped as a seat. */
export function roleSections(env: Record<string, unknown>): [string, Seat][] {
  return Object.entries(env).filter(([, v]) =>
    isPlainObject(v) && isPlainObject(v.harness) && isPlainObject(v.runtime) && "retries" in v
  ) as [string, Seat][];
}
