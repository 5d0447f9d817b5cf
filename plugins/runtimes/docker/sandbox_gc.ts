/**
 * Containers known only from the sandbox ledger (`vf sandboxes gc`): removed by id, found
 * by name when their create never answered; only containers carrying this runtime's label
 * are ever touched.
 *
 * @module
 */
import {
  findPendingWith,
  type LedgerEntry,
  SandboxError,
  type StopByIdOptions,
  stopByIdWith,
} from "../../../kit/mod.ts";
import { docker, engineUnreachable, isEngineUnreachable, isNoSuchContainer } from "./cli.ts";
import { MANAGED_LABEL } from "./config.ts";
import { PROVIDER, removeContainer } from "./provider.ts";

/**
 * Removes the container of a ledger entry: "gone" when the engine has none with that id;
 * a container without this runtime's label is refused, never removed.
 */
export async function removeLedgerContainer(id: string): Promise<"terminated" | "gone"> {
  const r = await docker(
    [
      "inspect",
      "--type",
      "container",
      "--format",
      `{{index .Config.Labels "${MANAGED_LABEL}"}}`,
      id,
    ],
    { timeoutMs: 30_000 },
  );
  if (r.exitCode !== 0) {
    if (isNoSuchContainer(r.message)) return "gone";
    if (isEngineUnreachable(r)) throw engineUnreachable(r);
    throw new SandboxError(`docker inspect of container ${id} failed: ${r.message}`);
  }
  if (new TextDecoder().decode(r.stdout).trim() !== "1") {
    throw new SandboxError(`Cannot remove container ${id}: it lacks the label ${MANAGED_LABEL}`, {
      hint: "It was not made by the docker runtime; remove it yourself if it should go",
    });
  }
  return await removeContainer(id);
}

/** The ids of the labelled containers named as a pending ledger entry says. */
export const findPendingContainers: (entry: LedgerEntry) => Promise<string[]> = findPendingWith(
  PROVIDER,
  async (name) => {
    const r = await docker([
      "ps",
      "--all",
      "--no-trunc",
      "--quiet",
      "--filter",
      `name=^/${name}$`,
      "--filter",
      `label=${MANAGED_LABEL}=1`,
    ], { timeoutMs: 30_000 });
    if (r.exitCode !== 0) {
      throw isEngineUnreachable(r) ? engineUnreachable(r) : new Error(r.message);
    }
    return new TextDecoder().decode(r.stdout).split("\n").map((s) => s.trim()).filter(Boolean);
  },
);

/** Removes the container of a ledger entry, logging one the engine no longer has. */
export const stopContainerById: (entry: LedgerEntry, options?: StopByIdOptions) => Promise<void> =
  stopByIdWith(PROVIDER, (entry) => removeLedgerContainer(entry.id));
