/**
 * The steps of a remote start that touch the outside world, for
 * {@link RemoteSandboxRuntime.start} (`kit/remote/runtime.ts`): journaling the create in the
 * sandbox ledger (`kit/runtime/ledger.ts`) before the request and the sandbox once its id is
 * known, making the workdir, and reporting a failed start as one SandboxError.
 *
 * @module
 */
import { errorMessage, MissingCredentialsError, SandboxError } from "../errors.ts";
import {
  type PendingSandbox,
  recordPending,
  recordSandbox,
  removePending,
  removeSandbox,
} from "../runtime/ledger.ts";
import { decodeText } from "./files.ts";
import type { CreatedSandbox, SandboxCreation, SandboxProvider } from "./provider.ts";

/** A create journaled as pending: the entry and its key. */
export interface PendingCreate {
  entry: PendingSandbox;
  key: string;
}

/**
 * Journals the create as pending, then sends it. Journaled before the request, so a crash
 * before the reply leaves an entry `vf sandboxes gc` can resolve by name; a create the
 * provider refused outright made nothing, so its entry goes.
 */
export async function createJournaled<H>(
  provider: SandboxProvider<H>,
  creation: SandboxCreation<H>,
  who: { name: string; run: string | null },
  signal: AbortSignal | undefined,
): Promise<{ made: CreatedSandbox<H>; pending: PendingCreate }> {
  const entry = { provider: provider.name, ...who, ...creation.journal };
  const pending = { entry, key: recordPending(entry) };
  try {
    return { made: await creation.create(signal), pending };
  } catch (e) {
    if (provider.isRefusal(e)) forgetPending(provider.name, pending.key);
    throw e;
  }
}

/** Records the created sandbox in the ledger and drops its pending entry. */
export function journalCreated(pending: PendingCreate, id: string): void {
  recordSandbox({ ...pending.entry, id, created_at: new Date().toISOString() });
  forgetPending(pending.entry.provider, pending.key);
}

/** `mkdir -p <workdir>` in the new sandbox; a SandboxError when it fails. */
export async function makeWorkdir<H>(
  provider: SandboxProvider<H>,
  handle: H,
  workdir: string,
  signal: AbortSignal | undefined,
): Promise<void> {
  const mk = await provider.exec(handle, { argv: ["mkdir", "-p", workdir], timeoutS: 60, signal });
  if (mk.exitCode !== 0) {
    throw new SandboxError(
      `cannot create the workdir "${workdir}" (exit ${mk.exitCode}): ${
        decodeText(mk.stderr).trim()
      }`,
      { hint: "Pick a workdir the image's user may create (runtime key workdir)" },
    );
  }
}

/**
 * A failed start as `<provider> sandbox provisioning failed: ...` (a MissingCredentialsError
 * stays one), with the provider's status and hint.
 */
export function provisioningFailure<H>(
  provider: SandboxProvider<H>,
  e: unknown,
  signal: AbortSignal | undefined,
): SandboxError {
  const prefix = `${provider.name} sandbox provisioning failed`;
  if (e instanceof SandboxError && e.message.startsWith(prefix)) return e;
  const Failure = e instanceof MissingCredentialsError ? MissingCredentialsError : SandboxError;
  const detail = provider.describeError?.(e) ?? {};
  const own = e instanceof SandboxError ? e : null;
  return new Failure(`${prefix}: ${errorMessage(e)}`, {
    statusCode: detail.statusCode ?? own?.statusCode ?? null,
    hint: own?.hint ?? detail.hint ?? (signal?.aborted ? "The start was cancelled" : undefined),
    cause: e,
  });
}

/** Closes a handle; a failure to close changes nothing. */
export function closeQuietly<H>(provider: SandboxProvider<H>, handle: H): void {
  try {
    provider.close?.(handle);
  } catch {
    // released anyway
  }
}

function forgetPending(provider: string, key: string): void {
  try {
    removePending(provider, key);
  } catch {
    // the entry stays; "vf sandboxes gc" resolves it by name
  }
}

/**
 * Removes a sandbox whose termination was confirmed from the ledger, and the pending entry
 * of its create when the ledger failed to record the sandbox by id.
 */
export function forgetSandbox(provider: string, id: string, pending?: PendingCreate | null): void {
  try {
    removeSandbox(provider, id);
  } catch {
    // the entry stays; "vf sandboxes gc" will find the sandbox gone
  }
  if (pending) forgetPending(provider, pending.key);
}
