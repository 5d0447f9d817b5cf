/**
 * The `prime` runtime: one Prime Intellect sandbox per instance, driven by our own client,
 * on the remote-sandbox base (`kit/remote/runtime.ts`), which owns the lifecycle of
 * `verifiers/v1/runtimes/prime.py@a60a606` (the confirmed-teardown branch), the ledger, the
 * creation limiter and the process-group protocol; provider.ts drives Prime itself.
 *
 * Commands run as detached background jobs (`kit/remote/process_group.ts`): at the deadline
 * (or on abort) the job's whole process group in the sandbox is killed and the exit code is
 * 124 (or 137), as the local runtime does.
 *
 * @module
 */
import { RemoteSandboxRuntime, type RuntimeInfo } from "../../../kit/mod.ts";
import type { ResolvedPrimeConfig } from "./config.ts";
import { type PrimeHandle, PrimeProvider, type PrimeRuntimeOptions } from "./provider.ts";

export {
  DEFAULT_RUN_TIMING,
  PRIME_PROVIDER,
  type PrimeRuntimeOptions,
  type PrimeRunTiming,
  sharedStatusPoller,
} from "./provider.ts";

/** A Runtime backed by one Prime sandbox. */
export class PrimeRuntime extends RemoteSandboxRuntime<PrimeHandle> {
  readonly #config: ResolvedPrimeConfig;
  readonly #provider: PrimeProvider;

  constructor(config: ResolvedPrimeConfig, name: string, options: PrimeRuntimeOptions = {}) {
    const provider = new PrimeProvider(config, name, options);
    super(provider, {
      name,
      workdir: config.workdir,
      timeoutS: config.timeout,
      run: options.run ?? null,
      log: options.log,
      handleName: "client",
    });
    this.#config = config;
    this.#provider = provider;
  }

  /** `{type: "prime", id, image_cached}`; the id is kept after teardown. */
  override get info(): RuntimeInfo & { image_cached: boolean | null } {
    return { ...super.info, image_cached: this.#provider.imageCached };
  }

  /** The resolved config (for tests and `vf sandbox exec`). */
  get config(): ResolvedPrimeConfig {
    return this.#config;
  }

  /** True while a client is held (tests check that teardown releases it). */
  get hasClient(): boolean {
    return this.holdsHandle;
  }

  /** The public URL of a port served inside the sandbox (region-gated at Prime). */
  async expose(port: number): Promise<string> {
    const { handle, id } = this.live(`expose port ${port}`);
    try {
      return await handle.client.expose(id, port);
    } catch (e) {
      throw this.failure(
        e,
        `Cannot expose port ${port} of sandbox ${id}`,
        "Port exposure is region-gated at Prime (region us supports it)",
      );
    }
  }
}
