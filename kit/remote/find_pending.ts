/**
 * Pending lookup for `vf sandboxes gc` (`RuntimePlugin.findPending`, `kit/contract.ts`): a
 * create request whose reply never arrived left a pending ledger entry with the sandbox's
 * name; the provider is asked which live sandboxes carry that name, and those are stopped.
 *
 * @module
 */
import { errorMessage, SandboxError } from "../errors.ts";
import type { LedgerEntry } from "../runtime/ledger.ts";

/** The ids of the live sandboxes the provider holds under `name` ([] when none). */
export type FindByName = (name: string, entry: LedgerEntry) => Promise<readonly string[]>;

/**
 * The `findPending` of a runtime plugin from its provider's lookup by name: an entry with
 * no name finds nothing, each id is listed once, and a failed lookup is a
 * {@link SandboxError} that names the provider and the sandbox.
 */
export function findPendingWith(
  provider: string,
  findByName: FindByName,
): (entry: LedgerEntry) => Promise<string[]> {
  return async (entry) => {
    if (!entry.name) return [];
    try {
      return [...new Set(await findByName(entry.name, entry))];
    } catch (e) {
      throw new SandboxError(
        `${provider} lookup of sandbox "${entry.name}" failed: ${errorMessage(e)}`,
        { cause: e },
      );
    }
  };
}
