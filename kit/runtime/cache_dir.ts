/**
 * The per-user cache directory of verifiers-ts: the sandbox ledger, creation limiters and
 * other state shared by every process of the user live under it.
 *
 * @module
 */
import { mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { getEnv } from "../_runtime/env.ts";

/**
 * The user cache directory, created on demand: `$VF_CACHE_DIR`, else
 * `$XDG_CACHE_HOME/verifiers-ts`, else `~/.cache/verifiers-ts`.
 */
export function userCacheDir(): string {
  const explicit = getEnv("VF_CACHE_DIR");
  const xdg = getEnv("XDG_CACHE_HOME");
  const dir = explicit && explicit !== ""
    ? explicit
    : xdg && xdg !== ""
    ? join(xdg, "verifiers-ts")
    : join(homedir(), ".cache", "verifiers-ts");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** A subdirectory of {@link userCacheDir}, created on demand. */
export function userCacheSubdir(...parts: string[]): string {
  const dir = join(userCacheDir(), ...parts);
  mkdirSync(dir, { recursive: true });
  return dir;
}
