/**
 * Modal as a remote-sandbox provider (`kit/remote/provider.ts`): provision (the account's
 * app and registry image, `SandboxCreate`, then the task and its command router), exec
 * through the router (exec.ts), and `SandboxTerminate`. The base (`kit/remote/runtime.ts`)
 * owns the ledger, the creation limiter, the stop/stopConfirmed state machine and the
 * process-group protocol; files move through its `sh` programs over exec.
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
import { accountFor, cached } from "./accounts.ts";
import { buildRegistryImage, type ModalApi } from "./api.ts";
import { MODAL_APP_NAME, type ModalRuntimeConfig, sandboxDefinition } from "./config.ts";
import { execInSandbox } from "./exec.ts";
import { spawnLiveInSandbox } from "./live.ts";
import { execHint, isRefusal, provisioningHint } from "./failures.ts";
import * as M from "./messages.ts";
import { resolveModalProfile } from "./profile.ts";
import type { ModalProfile } from "./profile.ts";
import { TaskRouter, waitForTask } from "./router.ts";
import { PROVIDER } from "./sandbox_gc.ts";

/** What drives one created Modal sandbox. */
export interface ModalHandle {
  sandboxId: string;
  api: ModalApi;
  /** The task's command router, once the sandbox is scheduled. */
  router: TaskRouter | null;
}

/** The provider of one {@link ModalRuntime} (`runtime.ts`). */
export class ModalProvider implements SandboxProvider<ModalHandle> {
  readonly name = PROVIDER;
  /** The task command router writes stdin as it arrives (`exec.ts`). */
  readonly streamsStdin = true;
  readonly createRate: { perSecond: number | null };
  readonly #config: ModalRuntimeConfig;
  readonly #name: string;
  readonly #profile: ModalProfile | undefined;
  /** Where the runtime is, for the hint an error gets. */
  #phase: "provisioning" | "running" | "stopping" = "provisioning";

  constructor(config: ModalRuntimeConfig, name: string, profile?: ModalProfile) {
    this.#config = config;
    this.#name = name;
    this.#profile = profile;
    this.createRate = { perSecond: config.creates_per_sec };
  }

  /** The account's app and image (cached per process), and the create to send. */
  async prepare(): Promise<SandboxCreation<ModalHandle>> {
    this.#phase = "provisioning";
    const account = accountFor(this.#profile ?? resolveModalProfile());
    const { api } = account;
    const cfg = this.#config;
    const appId = await cached(
      account.apps,
      MODAL_APP_NAME,
      () => api.appGetOrCreate(MODAL_APP_NAME, true),
    );
    const imageId = await cached(
      account.images,
      `${appId}\n${cfg.image}`,
      () => buildRegistryImage(api, appId, cfg.image, [["ENTRYPOINT []"]]),
    );
    const definition = sandboxDefinition(cfg, imageId, this.#name) as M.SandboxDefinition;
    return {
      journal: {
        config: {
          server_url: api.profile.serverUrl,
          environment: api.profile.environment,
          app_name: MODAL_APP_NAME,
        },
      },
      create: async (): Promise<CreatedSandbox<ModalHandle>> => {
        const created = await api.unary(
          "SandboxCreate",
          M.SandboxCreateRequest,
          M.SandboxCreateResponse,
          { appId, definition },
        );
        const sandboxId = created.sandboxId;
        if (!sandboxId) throw new SandboxError("modal SandboxCreate returned no sandbox id");
        return { id: sandboxId, handle: { sandboxId, api, router: null } };
      },
    };
  }

  /** True when Modal refused the create outright (nothing was made). */
  isRefusal(error: unknown): boolean {
    return isRefusal(error);
  }

  /** Waits for the sandbox's task and opens its command router. */
  async ready(handle: ModalHandle, id: string, signal?: AbortSignal): Promise<void> {
    const taskId = await waitForTask(handle.api, id, signal);
    handle.router = await TaskRouter.open(handle.api, taskId, signal);
    this.#phase = "running";
  }

  /** Runs one command through the router (exec.ts). */
  exec(handle: ModalHandle, request: ExecRequest): Promise<ExecResult> {
    if (handle.router === null) {
      return Promise.reject(new SandboxError("modal exec: the sandbox has no task yet"));
    }
    return execInSandbox(handle.api, handle.router, request);
  }

  /** Starts a live program through the router (live.ts). */
  spawn(
    handle: ModalHandle,
    request: Pick<ExecRequest, "argv" | "cwd" | "env">,
  ): Promise<RuntimeProcess> {
    if (handle.router === null) {
      return Promise.reject(new SandboxError("modal exec: the sandbox has no task yet"));
    }
    return spawnLiveInSandbox(handle.api, handle.router, request);
  }

  /** `SandboxTerminate`; any failure (NOT_FOUND too) leaves it unconfirmed. */
  async terminate(handle: ModalHandle, id: string): Promise<"terminated"> {
    this.#phase = "stopping";
    await handle.api.sandboxTerminate(id);
    return "terminated";
  }

  /** Closes the router's connection. */
  close(handle: ModalHandle): void {
    handle.router?.close();
    handle.router = null;
  }

  /** The hint of a provisioning or exec failure, by gRPC code. */
  describeError(error: unknown): ErrorDetail {
    const hint = this.#phase === "provisioning"
      ? provisioningHint(error)
      : this.#phase === "running"
      ? execHint(error)
      : undefined;
    return hint === undefined ? {} : { hint };
  }
}
