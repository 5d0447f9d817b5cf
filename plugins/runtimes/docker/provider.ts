/**
 * The Docker engine as a sandbox provider (`kit/remote/provider.ts`): `docker run` makes a
 * labelled container, `docker exec -i` runs one command attached (stdin piped, both outputs
 * read to their end), `docker rm --force` removes it. The base (`kit/remote/runtime.ts`)
 * owns the ledger, the creation limiter, the stop/stopConfirmed state machine, the
 * process-group kill at a timeout, and files (its `sh` programs over exec).
 *
 * @module
 */
import {
  type CreatedSandbox,
  type ErrorDetail,
  type ExecRequest,
  type ExecResult,
  type RuntimeProcess,
  type SandboxCreation,
  SandboxError,
  type SandboxProvider,
} from "../../../kit/mod.ts";
import {
  docker,
  dockerLive,
  engineUnreachable,
  imageMissing,
  isEngineUnreachable,
  isNoSuchContainer,
  isNoSuchImage,
} from "./cli.ts";
import {
  type DockerRuntimeConfig,
  egressTargets,
  MANAGED_LABEL,
  networkPolicy,
  RUN_LABEL,
  runArgs,
} from "./config.ts";
import { applyEgress, resolveEgress } from "./egress.ts";

/** Ledger and limiter name of the provider. */
export const PROVIDER = "docker";

/** Largest stdout (and stderr) a command may return; more fails the command. */
export const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** How long `docker run` may take (an engine that hangs fails the start). */
const CREATE_TIMEOUT_MS = 300_000;

/** Names the `docker` CLI reads itself: passed by value, never through its environment. */
const CLI_OWN_VARIABLE = /^(DOCKER_.*|PATH|HOME|VF_DOCKER_CLI|TMPDIR|XDG_.*)$/;

/** A container: its id (what every call names). */
export interface DockerHandle {
  id: string;
}

/** A refusal of `docker run`: the engine made no container. */
class RunRefused extends SandboxError {}

/** The provider of one {@link DockerRuntime} (`runtime.ts`). */
export class DockerProvider implements SandboxProvider<DockerHandle> {
  readonly name = PROVIDER;
  readonly createRate = { perSecond: null };
  readonly #config: DockerRuntimeConfig;
  readonly #name: string;
  readonly #run: string | null;
  readonly #maxOutputBytes: number;

  constructor(
    config: DockerRuntimeConfig,
    name: string,
    run: string | null,
    maxOutputBytes = MAX_OUTPUT_BYTES,
  ) {
    this.#config = config;
    this.#name = name;
    this.#run = run;
    this.#maxOutputBytes = maxOutputBytes;
  }

  /** The create to send: `docker run` with the labels the ledger notes too. */
  prepare(): Promise<SandboxCreation<DockerHandle>> {
    const labels: Record<string, string> = { [MANAGED_LABEL]: "1" };
    if (this.#run) labels[RUN_LABEL] = this.#run;
    const egress = egressTargets(networkPolicy(this.#config));
    const image = this.#config.image;
    return Promise.resolve({
      journal: { labels: Object.entries(labels).map(([k, v]) => `${k}=${v}`) },
      create: async (signal?: AbortSignal): Promise<CreatedSandbox<DockerHandle>> => {
        // not cut short by the signal: a container must never be made unseen
        void signal;
        // names are resolved once, before the container exists: a failure makes nothing
        const plan = egress && "targets" in egress
          ? await resolveEgress(egress.mode, egress.targets).catch((e) => {
            throw refusal(e as SandboxError);
          })
          : null;
        const args = runArgs(this.#config, this.#name, labels, plan?.hosts);
        const r = await docker(args, { timeoutMs: CREATE_TIMEOUT_MS });
        if (r.exitCode !== 0) {
          if (isEngineUnreachable(r)) throw refusal(engineUnreachable(r));
          if (isNoSuchImage(r.message)) throw refusal(imageMissing(image, r.message));
          const failed = new SandboxError(`docker run failed: ${r.message}`, {
            hint: `Check that image "${image}" has \`sleep\` and \`sh\` on its PATH`,
          });
          // a container made but not started (its first process failed) is removed now;
          // when that is confirmed nothing is left, else the ledger keeps it for gc
          const left = await removeContainer(this.#name).catch(() => null);
          throw left === null ? failed : refusal(failed);
        }
        const id = new TextDecoder().decode(r.stdout).trim().split("\n").pop() ?? "";
        if (!/^[0-9a-f]{12,64}$/.test(id)) {
          throw new SandboxError(`docker run printed no container id: "${id.slice(0, 100)}"`);
        }
        if (plan) {
          // no program but `sleep` runs before the rules hold: one that cannot be loaded
          // fails the start, and the container goes (the ledger keeps it if that fails)
          try {
            await applyEgress(id, plan);
          } catch (e) {
            const left = await removeContainer(id).catch(() => null);
            throw left === null ? e : refusal(e as SandboxError);
          }
        }
        return { id, handle: { id } };
      },
    });
  }

  /** True when `docker run` refused (no engine, no image): nothing was made. */
  isRefusal(error: unknown): boolean {
    return error instanceof RunRefused;
  }

  /** Runs one command attached: `docker exec -i`, env through the CLI's environment. */
  async exec(handle: DockerHandle, request: ExecRequest): Promise<ExecResult> {
    const { args, passed } = execArgs(handle, request);
    const r = await docker(args, {
      env: passed,
      stdin: request.stdin ?? new Uint8Array(0),
      signal: request.signal,
      timeoutMs: request.timeoutS === undefined ? undefined : request.timeoutS * 1000,
      maxOutputBytes: this.#maxOutputBytes,
    });
    if (request.signal?.aborted) throw request.signal.reason ?? new Error("aborted");
    if (isEngineUnreachable(r) || (r.exitCode !== 0 && isNoSuchContainer(r.message))) {
      throw new SandboxError(`docker exec failed: ${r.message}`);
    }
    if (r.truncated) {
      // never a silently cut result (a file read through `cat` would come back short)
      throw new SandboxError(
        `Cannot run "${
          request.argv[0]
        }": its output passed the limit of ${this.#maxOutputBytes} bytes`,
        { hint: "Write large output to a file and read it with maxBytes, or in parts" },
      );
    }
    return r;
  }

  /**
   * Starts one command with its stdin streaming: a `docker exec -i` that stays open. The
   * command ends when its stdin does (the relay does) or with the container.
   */
  spawn(
    handle: DockerHandle,
    request: Pick<ExecRequest, "argv" | "cwd" | "env">,
  ): Promise<RuntimeProcess> {
    const { args, passed } = execArgs(handle, request);
    return Promise.resolve(dockerLive(args, passed));
  }

  /** `docker rm --force`: "terminated" once the engine removed it, "gone" when it had none. */
  async terminate(handle: DockerHandle): Promise<"terminated" | "gone"> {
    return await removeContainer(handle.id);
  }

  /** The hint of a failure. */
  describeError(error: unknown): ErrorDetail {
    return error instanceof SandboxError && error.hint ? { hint: error.hint } : {};
  }
}

/** The `docker exec -i` arguments of a request, and the variables the CLI passes on. */
function execArgs(
  handle: DockerHandle,
  request: Pick<ExecRequest, "argv" | "cwd" | "env">,
): { args: string[]; passed: Record<string, string> } {
  const args = ["exec", "-i"];
  const passed: Record<string, string> = {};
  for (const [k, v] of Object.entries(request.env ?? {})) {
    if (CLI_OWN_VARIABLE.test(k)) args.push("--env", `${k}=${v}`);
    else {
      args.push("--env", k);
      passed[k] = v;
    }
  }
  if (request.cwd !== undefined) args.push("--workdir", request.cwd);
  args.push(handle.id, ...request.argv);
  return { args, passed };
}

function refusal(e: SandboxError): RunRefused {
  return new RunRefused(e.message, e.hint === undefined ? {} : { hint: e.hint });
}

/**
 * Removes a container: "terminated" once the engine answered it removed, "gone" when the
 * engine has no such container; anything else throws.
 */
export async function removeContainer(id: string): Promise<"terminated" | "gone"> {
  const r = await docker(["rm", "--force", id], { timeoutMs: 60_000 });
  if (r.exitCode === 0) return "terminated";
  if (isNoSuchContainer(r.message)) return "gone";
  if (/removal of container .* is already in progress/i.test(r.message)) {
    // `--rm` at the end of its lifetime, or a concurrent gc: wait for the engine to finish
    for (let i = 0; i < 100; i++) {
      const seen = await docker(["inspect", "--format", "{{.Id}}", id], { timeoutMs: 30_000 });
      if (seen.exitCode !== 0 && isNoSuchContainer(seen.message)) return "gone";
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  if (isEngineUnreachable(r)) throw engineUnreachable(r);
  throw new SandboxError(`docker rm of container ${id.slice(0, 12)} failed: ${r.message}`);
}
