import { denoHost, nodeProcess } from "./host.ts";

/** Reads an environment variable; `undefined` when unset or not permitted. */
export function getEnv(name: string): string | undefined {
  try {
    const deno = denoHost();
    return deno ? deno.env.get(name) : nodeProcess().env[name];
  } catch {
    return undefined;
  }
}

/** A copy of the whole environment (empty when not permitted). */
export function getAllEnv(): Record<string, string> {
  try {
    // Deno's `process.env` answers each key with a call into the runtime; `toObject()` is one
    const deno = denoHost();
    if (deno) return deno.env.toObject();
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(nodeProcess().env)) if (v !== undefined) out[k] = v;
    return out;
  } catch {
    return {};
  }
}
