/**
 * Runtime ids and config shapes on the wire, as Python `verifiers` v1 has them
 * (`verifiers/v1/runtimes/{subprocess,prime,modal}.py`, `runtimes/docker/__init__.py`,
 * `configs/runtime.py` at a60a606). Python's runtime configs forbid unknown keys, so the
 * keys only verifiers-ts has are kept out of traces and `configs/eval.json` (they go to the
 * run's `configs/verifiers-ts.json`).
 *
 * @module
 */

/** The runtime that runs commands on this machine; `local` is accepted as an alias. */
export const SUBPROCESS = "subprocess";

/** Runtime ids accepted for {@link SUBPROCESS}. */
export const SUBPROCESS_ALIASES: readonly string[] = ["local"];

/** The runtime type as written: `local` becomes `subprocess`, anything else is kept. */
export function wireRuntimeType(type: string): string {
  return SUBPROCESS_ALIASES.includes(type) ? SUBPROCESS : type;
}

const EGRESS = ["allow", "block"];

/** The keys Python's config of each runtime type has (`type` included). */
const PYTHON_RUNTIME_KEYS: Record<string, readonly string[]> = {
  subprocess: ["type"],
  docker: ["type", ...EGRESS, "image", "workdir", "cpu", "memory", "gpu", "disk"],
  prime: [
    "type",
    ...EGRESS,
    "image",
    "workdir",
    "vm",
    "guaranteed",
    "region",
    "labels",
    "cpu",
    "memory",
    "gpu",
    "disk",
    "idle_timeout",
    "creates_per_min",
  ],
  modal: [
    "type",
    "image",
    "workdir",
    "network_access",
    "region",
    "cpu",
    "memory",
    "gpu",
    "disk",
    "creates_per_sec",
  ],
};

/**
 * Splits a resolved runtime config into what Python's model of that runtime accepts and
 * the keys only verifiers-ts has. A runtime Python does not know (a plugin) is all wire.
 */
export function splitRuntimeConfig(
  config: Record<string, unknown>,
): { wire: Record<string, unknown>; extras: Record<string, unknown> } {
  const type = wireRuntimeType(String(config.type ?? SUBPROCESS));
  const known = PYTHON_RUNTIME_KEYS[type];
  const wire: Record<string, unknown> = { type };
  const extras: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config)) {
    if (k === "type") continue;
    if (!known || known.includes(k)) wire[k] = v;
    else extras[k] = v;
  }
  return { wire, extras };
}
