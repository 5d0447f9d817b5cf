/**
 * The `prime` runtime plugin: Prime Intellect sandboxes through our own fetch-based
 * client (control plane, gateway, Connect command session for VMs). Reads
 * `PRIME_API_BASE_URL`/`PRIME_BASE_URL`, `PRIME_API_KEY` and `PRIME_TEAM_ID` (or
 * `~/.prime/config.json`) like the Prime tools do.
 *
 * @module
 */
import {
  defineRuntime,
  type LedgerEntry,
  type Runtime,
  type RuntimeCreateOptions,
  stopByIdWith,
} from "../../../kit/mod.ts";
import { PrimeClient, type PrimeClientOptions } from "./client.ts";
import { checkPrimeConfig, PRIME_CONFIG_HINT, PrimeRuntimeConfig } from "./config.ts";
import { findPendingPrimeSandboxes } from "./find_pending.ts";
import { isPrimeNotFound, PRIME_PROVIDER } from "./provider.ts";
import { PrimeRuntime } from "./runtime.ts";
import { loadPrimeSettings } from "./settings.ts";

export { PrimeRuntimeConfig, resolvePrimeConfig } from "./config.ts";
export { PrimeRuntime, type PrimeRuntimeOptions, sharedStatusPoller } from "./runtime.ts";

/**
 * DELETEs the sandbox of a ledger entry ("gone" on a typed 404), with the entry's
 * `base_url` and the API key from the environment.
 */
async function deletePrimeSandbox(
  entry: LedgerEntry,
  options: PrimeStopByIdOptions,
): Promise<"terminated" | "gone"> {
  const baseUrl = typeof entry.config?.base_url === "string" ? entry.config.base_url : null;
  const client = new PrimeClient(loadPrimeSettings({ baseUrl }), options.client);
  try {
    await client.deleteSandbox(entry.id);
    return "terminated";
  } catch (e) {
    if (isPrimeNotFound(e)) return "gone";
    throw e;
  } finally {
    client.close();
  }
}

/** Options of {@link stopPrimeSandboxById}. */
export interface PrimeStopByIdOptions {
  log?: (message: string) => void;
  client?: PrimeClientOptions;
}

/** Confirms the deletion of a sandbox known only from its ledger entry (404 = gone). */
export const stopPrimeSandboxById: (
  entry: LedgerEntry,
  options?: PrimeStopByIdOptions,
) => Promise<void> = stopByIdWith<PrimeStopByIdOptions>(PRIME_PROVIDER, deletePrimeSandbox);

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
