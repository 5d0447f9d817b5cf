/**
 * The `modal` runtime: each rollout in its own Modal sandbox, driven by our own gRPC client
 * over `node:http2` (no Modal SDK). It stands on the remote-sandbox base
 * (`kit/remote/runtime.ts`), which keeps the confirmed-teardown semantics of
 * `verifiers/v1/runtimes/modal.py@a60a606` (`stopConfirmed()` gets Modal's OK for
 * `SandboxTerminate` or throws, is idempotent once confirmed; every sandbox is in the
 * user's sandbox ledger from the moment its id is known until a terminate succeeds), the
 * creation limiter and the process-group kill; provider.ts drives Modal: `timeout` 60..86400 s
 * sent as `Math.trunc(timeout)`, the registry image, the task command router.
 *
 * Commands run through the router with piped stdout/stderr (exec.ts). The router has no kill
 * RPC, so a command given a timeout or an abort signal runs under the base's `sh` wrapper in
 * its own process group, which a second exec SIGKILLs; a command killed for its timeout
 * returns exit code 124 (as `timeout(1)` and the local runtime), one killed by an abort 137.
 * Environment variables reach a command through an ephemeral secret, as the official SDK
 * does. Files move through exec (`cat`), binary-safe.
 *
 * Connection settings come from the same places as the official SDK: `MODAL_SERVER_URL`,
 * `MODAL_TOKEN_ID`, `MODAL_TOKEN_SECRET`, `MODAL_ENVIRONMENT`, else `~/.modal.toml`.
 *
 * @module
 */
import {
  defineRuntime,
  type LedgerEntry,
  type Runtime,
  type RuntimeCreateOptions,
  type StopByIdOptions,
} from "../../../kit/mod.ts";
import { ModalRuntimeConfig, parseGpu } from "./config.ts";
import { ModalRuntime } from "./runtime.ts";
import { findPendingModalSandboxes, forget, stopModalSandboxById } from "./sandbox_gc.ts";

export { closeModalConnections, sharedModalApi } from "./accounts.ts";
export {
  MODAL_APP_NAME,
  ModalRuntimeConfig,
  parseGpu,
  sandboxDefinition,
  sandboxName,
  SERVICE_PORT,
} from "./config.ts";
export { ModalRuntime, type ModalRuntimeOptions } from "./runtime.ts";
export { findPendingModalSandboxes, terminateModalSandbox } from "./sandbox_gc.ts";

/** The `modal` runtime plugin. */
export default defineRuntime({
  id: "modal",
  description: "Runs each rollout in its own Modal sandbox (MODAL_TOKEN_ID/MODAL_TOKEN_SECRET)",
  isLocal: false,
  config: ModalRuntimeConfig,
  configHint: "See `vf plugins show modal` for the keys and their ranges",
  create(config, options: RuntimeCreateOptions): Runtime {
    parseGpu(config.gpu);
    return new ModalRuntime(config, {
      name: options.name,
      run: options.run,
      log: options.log,
    });
  },
  async stopById(entry: LedgerEntry, options?: StopByIdOptions) {
    await stopModalSandboxById(entry, options);
    forget(entry.id);
  },
  findPending: (entry: LedgerEntry) => findPendingModalSandboxes(entry),
});
