/**
 * The docker runtime: one container at a time on the remote-sandbox base
 * (`kit/remote/runtime.ts`), so it has the same confirmed teardown, ledger and
 * process-group kill as the remote runtimes; provider.ts drives the engine.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { RemoteSandboxRuntime } from "../../../kit/mod.ts";
import {
  CONTAINER_LIFETIME_S,
  containerName,
  type DockerRuntimeConfig,
  networkPolicy,
} from "./config.ts";
import { isRestricted } from "./network_policy.ts";
import { type DockerHandle, DockerProvider } from "./provider.ts";

/** Options of a {@link DockerRuntime} beyond its config. */
export interface DockerRuntimeOptions {
  /** The instance's name (the trace id); the container is named after it. */
  name: string;
  /** The run that owns the container: its label and ledger entry. */
  run?: string | null | undefined;
  /** Receives warnings (best-effort teardown failures). */
  log?: ((message: string) => void) | undefined;
  /** Largest stdout (and stderr) of a command; more fails it. @default 64 MiB */
  maxOutputBytes?: number | undefined;
}

/** A {@link Runtime} backed by one Docker container at a time. */
export class DockerRuntime extends RemoteSandboxRuntime<DockerHandle> {
  /** True on the host's network (no policy): programs reach the host's loopback directly. */
  readonly hostLoopback: boolean;

  constructor(config: DockerRuntimeConfig, options: DockerRuntimeOptions) {
    const name = containerName(options.name, randomBytes(4).toString("hex"));
    const provider = new DockerProvider(config, name, options.run ?? null, options.maxOutputBytes);
    super(provider, {
      name,
      workdir: config.workdir,
      timeoutS: CONTAINER_LIFETIME_S,
      run: options.run ?? null,
      handleName: "container id",
      ...(options.log === undefined ? {} : { log: options.log }),
    });
    this.hostLoopback = !isRestricted(networkPolicy(config));
  }
}
