/**
 * The `docker` runtime: each rollout in its own container on this machine's Docker engine,
 * with the keys and defaults of Python verifiers' `DockerConfig`
 * (`verifiers/v1/runtimes/docker/__init__.py@a60a606`). It stands on the remote-sandbox base
 * (`kit/remote/runtime.ts`) like `prime` and `modal`: every container is in the sandbox
 * ledger from before its `docker run` until the engine confirmed its removal, so
 * `vf sandboxes list|gc` finds what a killed run left; `stopConfirmed()` succeeds only when
 * the engine removed the container or has none by that id; a command given a timeout or a
 * signal runs in its own process group inside the container, killed whole at the deadline
 * (exit 124). Containers carry the label `io.verifiers-ts.sandbox=1` (and the run's), and
 * `gc` removes no container without it.
 *
 * It drives the `docker` CLI rather than the Engine API. The API answers plain requests over
 * the unix socket from `node:http` on Deno and Bun alike, but `exec` with stdin needs the
 * connection hijacked (`Upgrade: tcp`) and the engine's multiplexed stream framing, which
 * would be a second transport to keep working on both runtimes; the CLI does all of that,
 * and finds the engine as the user's own `docker` does (`DOCKER_HOST`, `DOCKER_CONTEXT`,
 * TLS settings), as Python verifiers does. A command's variables reach `docker exec`
 * through the CLI's environment (`--env NAME`), never its argv.
 *
 * Images are never pulled (`--pull never`): one missing from this machine fails the start
 * with a SandboxError naming it and how to build or pull it. Network: no policy runs on the
 * host network (as Python); `block = ["*"]` (or `allow = []`) runs with no network at all;
 * rules naming destinations are packet filter rules of the container's own namespace
 * (`egress.ts`, `egress_rules.ts`).
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
import { DockerRuntimeConfig, gpuCount, networkPolicy } from "./config.ts";
import { DockerRuntime } from "./runtime.ts";
import { findPendingContainers, stopContainerById } from "./sandbox_gc.ts";

export {
  CONTAINER_LIFETIME_S,
  containerName,
  DockerRuntimeConfig,
  MANAGED_LABEL,
  RUN_LABEL,
  runArgs,
} from "./config.ts";
export { DockerRuntime, type DockerRuntimeOptions } from "./runtime.ts";
export { findPendingContainers, removeLedgerContainer } from "./sandbox_gc.ts";
export { networkRuleMatches, normalizePolicy } from "./network_policy.ts";

/** The `docker` runtime plugin. */
export default defineRuntime({
  id: "docker",
  description: "Runs each rollout in its own container on this machine's Docker engine",
  isLocal: false,
  config: DockerRuntimeConfig,
  configHint: "See `vf plugins show docker` for the keys",
  check(config) {
    networkPolicy(config);
    gpuCount(config.gpu);
  },
  create(config, options: RuntimeCreateOptions): Runtime {
    networkPolicy(config);
    gpuCount(config.gpu);
    return new DockerRuntime(config, { name: options.name, run: options.run, log: options.log });
  },
  stopById: (entry: LedgerEntry, options?: StopByIdOptions) => stopContainerById(entry, options),
  findPending: (entry: LedgerEntry) => findPendingContainers(entry),
});
