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
} from "../../../kit/mod.ts";
import { PrimeClient, type PrimeClientOptions } from "./client.ts";
import { checkPrimeConfig, PRIME_CONFIG_HINT, PrimeRuntimeConfig } from "./config.ts";
import { PrimeApiError } from "./errors.ts";
import { findPendingPrimeSandboxes } from "./find_pending.ts";
import { PrimeRuntime } from "./runtime.ts";
import { loadPrimeSettings } from "./settings.ts";

export { PrimeRuntimeConfig, resolvePrimeConfig } from "./config.ts";
export { PrimeRuntime, type PrimeRuntimeOptions, sharedStatusPoller } from "./runtime.ts";

/**
 * Confirms the deletion of a sandbox known only from its ledger entry: DELETE, with a 404
 * counting as gone. Uses the entry's `base_url` and the API key from the environment.
 */
export async function stopPrimeSandboxById(
  entry: LedgerEntry,
  options: { log?: (m: string) => void; client?: PrimeClientOptions } = {},
): Promise<void> {
  const baseUrl = typeof entry.config?.base_url === "string" ? entry.config.base_url : null;
  const settings = loadPrimeSettings({ baseUrl });
  const client = new PrimeClient(settings, options.client);
  try {
    await client.deleteSandbox(entry.id);
  } catch (e) {
    if (!(e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 404)) throw e;
    options.log?.(`prime sandbox ${entry.id} was already gone`);
  } finally {
    client.close();
  }
}

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
