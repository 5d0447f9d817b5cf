/**
 * The `prime` runtime plugin: Prime Intellect sandboxes through our own fetch-based
 * client (control plane, gateway, Connect command session for VMs). Reads
 * `PRIME_API_BASE_URL`/`PRIME_BASE_URL`, `PRIME_API_KEY` and `PRIME_TEAM_ID` (or
 * `~/.prime/config.json`) like the Prime tools do.
 *
 * @module
 */
import { defineRuntime, type Runtime, type RuntimeCreateOptions } from "../../../kit/mod.ts";
import { checkPrimeConfig, PRIME_CONFIG_HINT, PrimeRuntimeConfig } from "./config.ts";
import { PrimeRuntime } from "./runtime.ts";
import { findPendingPrimeSandboxes, stopPrimeSandboxById } from "./sandbox_gc.ts";

export { PrimeRuntimeConfig, resolvePrimeConfig } from "./config.ts";
export { PrimeRuntime, type PrimeRuntimeOptions, sharedStatusPoller } from "./runtime.ts";
export { type PrimeStopByIdOptions, stopPrimeSandboxById } from "./sandbox_gc.ts";

/** The `prime` runtime plugin. */
export default defineRuntime({
  id: "prime",
  description: "Runs commands in a Prime Intellect sandbox (container or VM), confirmed teardown",
  isLocal: false,
  config: PrimeRuntimeConfig,
  configHint: PRIME_CONFIG_HINT,
  create(config, options: RuntimeCreateOptions): Runtime {
    return new PrimeRuntime(checkPrimeConfig(config), options.name, {
      log: options.log,
      run: options.run ?? null,
    });
  },
  check(config): void {
    checkPrimeConfig(config);
  },
  stopById: (entry, options) => stopPrimeSandboxById(entry, options),
  findPending: (entry) => findPendingPrimeSandboxes(entry),
});
