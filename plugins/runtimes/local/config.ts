/**
 * Config of the `local` runtime, and which host variables its commands never see.
 *
 * @module
 */
import { z } from "zod";
import { isAllowedHostVariable } from "../../../kit/mod.ts";

/** Config keys of the `local` runtime. */
export const LocalRuntimeConfig = z.object({
  workdir_root: z.string().nullable().default(null).describe(
    "Directory in which each rollout's working directory is created; null = the OS temp directory",
  ),
  keep_workdir: z.boolean().default(false).describe(
    "Keep the working directory after the runtime stops (for debugging)",
  ),
  env: z.record(z.string(), z.string()).default({}).describe(
    "Extra environment variables for every command (on top of the allowlisted host variables)",
  ),
});

/** The resolved config of the `local` runtime. */
export type LocalRuntimeConfig = z.infer<typeof LocalRuntimeConfig>;

/** The config keys in a line, for error hints. */
export const LOCAL_CONFIG_HINT =
  "Keys: workdir_root (path or null), keep_workdir (bool), env (table of strings)";

/** True for host variables never passed to commands: every one off the allowlist. */
export function isHiddenHostVariable(name: string): boolean {
  return !isAllowedHostVariable(name);
}
