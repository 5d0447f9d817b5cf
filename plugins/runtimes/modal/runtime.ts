/**
 * The Modal runtime: one Modal sandbox at a time on the remote-sandbox base
 * (`kit/remote/runtime.ts`), which keeps the confirmed-teardown lifecycle of
 * `verifiers/v1/runtimes/modal.py@a60a606`; provider.ts drives Modal itself. Adds what only
 * Modal has: the tunnel of the declared service port.
 *
 * @module
 */
import { RemoteSandboxRuntime, SandboxError } from "../../../kit/mod.ts";
import { type ModalRuntimeConfig, sandboxName, SERVICE_PORT } from "./config.ts";
import * as M from "./messages.ts";
import type { ModalProfile } from "./profile.ts";
import { type ModalHandle, ModalProvider } from "./provider.ts";

/** Options of a {@link ModalRuntime} beyond its config. */
export interface ModalRuntimeOptions {
  /** The provider-side sandbox name (sanitized). */
  name: string;
  /** The run that owns the sandbox, noted in the sandbox ledger. */
  run?: string | null | undefined;
  /** Receives warnings (best-effort teardown failures). */
  log?: ((message: string) => void) | undefined;
  /** The profile to use. @default resolved from the environment and ~/.modal.toml */
  profile?: ModalProfile | undefined;
}

/** A {@link Runtime} backed by one Modal sandbox at a time. */
export class ModalRuntime extends RemoteSandboxRuntime<ModalHandle> {
  constructor(config: ModalRuntimeConfig, options: ModalRuntimeOptions) {
    const name = sandboxName(options.name);
    super(new ModalProvider(config, name, options.profile), {
      name,
      workdir: config.workdir,
      timeoutS: config.timeout,
      run: options.run ?? null,
      ...(options.log === undefined ? {} : { log: options.log }),
    });
  }

  /** `https://` URL of the declared service port (8000), or null for any other port. */
  async expose(port: number): Promise<string | null> {
    if (port !== SERVICE_PORT || !this.holdsHandle || this.stopped) return null;
    const { handle, id } = this.live(`expose port ${port}`);
    const res = await handle.api.sandboxGetTunnels(id, 50);
    if (res.result?.status === M.GenericStatus.TIMEOUT) {
      throw new SandboxError("modal tunnels are not ready yet", {
        hint: "The sandbox has not opened its tunnel within 50 s; try again",
      });
    }
    const t = res.tunnels.find((x) => x.containerPort === port);
    if (!t) return null;
    return t.port === 443 ? `https://${t.host}` : `https://${t.host}:${t.port}`;
  }
}
