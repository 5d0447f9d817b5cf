/**
 * Stop-by-id for `vf sandboxes gc` (`RuntimePlugin.stopById`, `kit/contract.ts`): a sandbox
 * known only from its ledger entry is terminated, and a provider that no longer knows it
 * counts as stopped. The caller removes the ledger entry once this resolves.
 *
 * @module
 */
import type { LedgerEntry } from "../runtime/ledger.ts";

/** Options every stop-by-id takes; a provider may add its own. */
export interface StopByIdOptions {
  log?: (message: string) => void;
}

/** Terminates the sandbox of a ledger entry: "gone" when the provider does not know it. */
export type TerminateById<O extends StopByIdOptions = StopByIdOptions> = (
  entry: LedgerEntry,
  options: O,
) => Promise<"terminated" | "gone">;

/**
 * The `stopById` of a runtime plugin from its provider's terminate-by-id: resolves once the
 * sandbox is terminated or gone (logging the latter), throws otherwise.
 */
export function stopByIdWith<O extends StopByIdOptions>(
  provider: string,
  terminate: TerminateById<O>,
): (entry: LedgerEntry, options?: O) => Promise<void> {
  return async (entry, options = {} as O) => {
    const outcome = await terminate(entry, options);
    if (outcome === "gone") options.log?.(`${provider} sandbox ${entry.id} was already gone`);
  };
}
