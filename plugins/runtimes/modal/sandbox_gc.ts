/**
 * Stopping Modal sandboxes known only from the sandbox ledger (`vf sandboxes gc`):
 * terminate by id, find what a pending create made (by name), and drop a ledger entry.
 *
 * @module
 */
import {
  errorMessage,
  findPendingWith,
  type LedgerEntry,
  removeSandbox,
  SandboxError,
  type StopByIdOptions,
  stopByIdWith,
} from "../../../kit/mod.ts";
import { accountFor } from "./accounts.ts";
import { MODAL_APP_NAME } from "./config.ts";
import { GrpcError, Status } from "./grpc.ts";
import * as M from "./messages.ts";
import { resolveModalProfile } from "./profile.ts";
import type { ModalProfile } from "./profile.ts";

/** Ledger and limiter provider name. */
export const PROVIDER = "modal";

/** Drops a sandbox's ledger entry (a failure leaves it for `vf sandboxes gc`). */
export function forget(id: string): void {
  try {
    removeSandbox(PROVIDER, id);
  } catch {
    // the ledger entry stays; "vf sandboxes gc" will find the sandbox gone
  }
}

/** The profile of this machine, pointed at the server and environment a ledger entry names. */
function ledgerProfile(config: Record<string, unknown>): ModalProfile {
  const serverUrl = typeof config.server_url === "string" ? config.server_url : null;
  const environment = typeof config.environment === "string" ? config.environment : null;
  return {
    ...resolveModalProfile(),
    ...(serverUrl ? { serverUrl } : {}),
    ...(environment !== null ? { environment } : {}),
  };
}

/**
 * Terminates a sandbox by id (for `vf sandboxes gc`): "terminated" when Modal confirmed it,
 * "gone" when Modal does not know the id (NOT_FOUND). Other failures throw.
 */
export async function terminateModalSandbox(
  id: string,
  ledgerConfig: Record<string, unknown> = {},
): Promise<"terminated" | "gone"> {
  const profile = ledgerProfile(ledgerConfig);
  try {
    await accountFor(profile).api.sandboxTerminate(id);
    return "terminated";
  } catch (e) {
    if (e instanceof GrpcError && e.code === Status.NOT_FOUND) return "gone";
    throw new SandboxError(`modal sandbox ${id} termination failed: ${errorMessage(e)}`, {
      cause: e,
    });
  }
}

/**
 * The live sandboxes a pending ledger entry's create may have made (for `vf sandboxes gc`):
 * `SandboxGetFromName` with the entry's name in its app — Modal names are unique among an
 * app's running sandboxes — so `[id]`, or `[]` when none runs under that name.
 */
export const findPendingModalSandboxes: (entry: LedgerEntry) => Promise<string[]> = findPendingWith(
  PROVIDER,
  async (name, entry) => {
    const cfg = entry.config ?? {};
    const profile = ledgerProfile(cfg);
    try {
      const res = await accountFor(profile).api.unary(
        "SandboxGetFromName",
        M.SandboxGetFromNameRequest,
        M.SandboxGetFromNameResponse,
        {
          sandboxName: name,
          appName: typeof cfg.app_name === "string" ? cfg.app_name : MODAL_APP_NAME,
          environmentName: profile.environment,
        },
      );
      return res.sandboxId ? [res.sandboxId] : [];
    } catch (e) {
      if (e instanceof GrpcError && e.code === Status.NOT_FOUND) return [];
      throw e; // findPendingWith names the provider and the sandbox
    }
  },
);

/** Terminates the sandbox of a ledger entry, logging one Modal no longer knows. */
export const stopModalSandboxById: (
  entry: LedgerEntry,
  options?: StopByIdOptions,
) => Promise<void> = stopByIdWith(
  PROVIDER,
  (entry) => terminateModalSandbox(entry.id, entry.config ?? {}),
);
