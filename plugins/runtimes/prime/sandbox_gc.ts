/**
 * Prime sandboxes known only from the sandbox ledger (`vf sandboxes gc`): deleting one by
 * id, and finding what a pending create made by looking its name up in Prime's own listing,
 * `GET /api/v1/sandbox` with `is_active=true` and the entry's labels, page by page as the
 * Prime SDK's `list()` asks for it (`prime_sandboxes/sandbox.py` at 66fb4b70). Both go
 * through {@link PrimeClient}, so they retry as every control-plane call does.
 *
 * @module
 */
import { findPendingWith, type LedgerEntry, stopByIdWith } from "../../../kit/mod.ts";
import { PrimeClient, type PrimeClientOptions } from "./client.ts";
import { isPrimeNotFound, PRIME_PROVIDER } from "./provider.ts";
import { loadPrimeSettings } from "./settings.ts";

/** Sandboxes asked for per page (the SDK's default is 50). */
const PER_PAGE = 100;
/** Pages read at most (10,000 active sandboxes). */
const MAX_PAGES = 100;

/** Options of {@link stopPrimeSandboxById}. */
export interface PrimeStopByIdOptions {
  log?: (message: string) => void;
  client?: PrimeClientOptions;
}

/**
 * Runs `use` with a client of the account a ledger entry names: its `base_url`, and the
 * API key and team from the environment. The client is closed afterwards.
 */
async function withEntryClient<T>(
  entry: LedgerEntry,
  options: PrimeClientOptions | undefined,
  use: (client: PrimeClient) => Promise<T>,
): Promise<T> {
  const baseUrl = typeof entry.config?.base_url === "string" ? entry.config.base_url : null;
  const client = new PrimeClient(loadPrimeSettings({ baseUrl }), options);
  try {
    return await use(client);
  } finally {
    client.close();
  }
}

/** DELETEs the sandbox of a ledger entry ("gone" on a typed 404). */
function deletePrimeSandbox(
  entry: LedgerEntry,
  options: PrimeStopByIdOptions,
): Promise<"terminated" | "gone"> {
  return withEntryClient(entry, options.client, async (client) => {
    try {
      await client.deleteSandbox(entry.id);
      return "terminated";
    } catch (e) {
      if (isPrimeNotFound(e)) return "gone";
      throw e;
    }
  });
}

/** Confirms the deletion of a sandbox known only from its ledger entry (404 = gone). */
export const stopPrimeSandboxById: (
  entry: LedgerEntry,
  options?: PrimeStopByIdOptions,
) => Promise<void> = stopByIdWith<PrimeStopByIdOptions>(PRIME_PROVIDER, deletePrimeSandbox);

/** The ids of the active Prime sandboxes named as the pending entry's sandbox. */
export const findPendingPrimeSandboxes: (entry: LedgerEntry) => Promise<string[]> = findPendingWith(
  PRIME_PROVIDER,
  (name, entry) =>
    withEntryClient(entry, undefined, async (client) => {
      const ids: string[] = [];
      for (let page = 1; page <= MAX_PAGES; page++) {
        const listed = await client.listSandboxes({
          page,
          perPage: PER_PAGE,
          isActive: true,
          labels: entry.labels ?? [],
        });
        for (const sb of listed.sandboxes) if (sb.name === name && sb.id) ids.push(sb.id);
        if (!listed.hasNext) break;
      }
      return ids;
    }),
);
