/**
 * The environment an agent's commands get: an allowlist, not a denylist. From the host only
 * the variables that locate and localize a shell ({@link HOST_ENV_ALLOWLIST}, plus `LC_*`);
 * then what the config names explicitly — the harness's `forward_env` (host variables copied
 * by name, values never written to the config) and `env` (explicit values, which win) — and
 * the call's own variables. No credential reaches an agent unless the config asks for it.
 *
 * @module
 */
import { getAllEnv, getEnv } from "../_runtime/env.ts";
import type {
  ProgramResult,
  RunOptions,
  Runtime,
  RuntimeProcess,
  SpawnOptions,
} from "./runtime.ts";

/** Host variables every agent command gets (when set), besides `LC_*`. */
const HOST_ENV_ALLOWLIST = [
  "PATH",
  "HOME",
  "USER",
  "LOGNAME",
  "SHELL",
  "LANG",
  "LANGUAGE",
  "TZ",
  "TERM",
  "COLORTERM",
  "NO_COLOR",
  "TMPDIR",
  "TMP",
  "TEMP",
] as const;

const ALLOWED = new Set<string>(HOST_ENV_ALLOWLIST);

/** True for a host variable on the allowlist (`LC_*` included). */
export function isAllowedHostVariable(name: string): boolean {
  return ALLOWED.has(name) || name.startsWith("LC_");
}

/** The allowlisted part of the host environment. */
export function allowedHostEnv(
  env: Record<string, string | undefined> = getAllEnv(),
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && isAllowedHostVariable(name)) out[name] = value;
  }
  return out;
}

/** The harness config's variables: `forward_env` copied from the host when set, then `env`. */
export function harnessEnv(
  config: Record<string, unknown>,
  env?: Record<string, string | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  const forward = Array.isArray(config.forward_env) ? config.forward_env : [];
  for (const name of forward) {
    if (typeof name !== "string") continue;
    // one lookup per forwarded name: this runs for every rollout, and copying the whole
    // host environment each time was most of a fast rollout's cost on Deno
    const value = env ? env[name] : getEnv(name);
    if (value !== undefined) out[name] = value;
  }
  const own = typeof config.env === "object" && config.env !== null ? config.env : {};
  for (const [name, value] of Object.entries(own)) {
    if (typeof value === "string") out[name] = value;
  }
  return out;
}

/**
 * The runtime as a harness sees it: every command gets `extra` below its own variables.
 * Everything else is the runtime itself.
 */
export function withCommandEnv(runtime: Runtime, extra: Record<string, string>): Runtime {
  if (Object.keys(extra).length === 0) return runtime;
  return new Proxy(runtime, {
    get(target, property) {
      if (property === "run") {
        return (argv: string[], options: RunOptions = {}): Promise<ProgramResult> =>
          target.run(argv, { ...options, env: { ...extra, ...options.env } });
      }
      if (property === "spawn" && target.spawn !== undefined) {
        const spawn = target.spawn.bind(target);
        return (argv: string[], options: SpawnOptions = {}): Promise<RuntimeProcess> =>
          spawn(argv, { ...options, env: { ...extra, ...options.env } });
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
