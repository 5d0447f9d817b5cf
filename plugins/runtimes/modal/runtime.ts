/**
 * The Modal runtime class: one sandbox at a time, driven through our own gRPC client (see
 * mod.ts for the lifecycle and teardown contract it keeps).
 *
 * @module
 */
import { posix } from "node:path";
import {
  acquireCreateSlot,
  errorMessage,
  MissingCredentialsError,
  type ProgramResult,
  type ReadOptions,
  recordPending,
  recordSandbox,
  removePending,
  type RunOptions,
  type Runtime,
  type RuntimeInfo,
  SandboxError,
} from "../../../kit/mod.ts";
import { type Account, accountFor, cached } from "./accounts.ts";
import { buildRegistryImage, type ModalApi } from "./api.ts";
import {
  MODAL_APP_NAME,
  type ModalRuntimeConfig,
  sandboxDefinition,
  sandboxName,
  SERVICE_PORT,
} from "./config.ts";
import { execInSandbox, type ExecOptions, type ExecResult } from "./exec.ts";
import * as M from "./messages.ts";
import { resolveModalProfile } from "./profile.ts";
import type { ModalProfile } from "./profile.ts";
import { TaskRouter, waitForTask } from "./router.ts";
import { isRefusal, provisioningHint } from "./failures.ts";
import { forget, PROVIDER } from "./sandbox_gc.ts";
import { decodeText, readFile, writeFile } from "./scripts.ts";

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

const RESTART_HINT = "Call start() first, or make a new runtime";

/** A {@link Runtime} backed by one Modal sandbox at a time. */
export class ModalRuntime implements Runtime {
  readonly isLocal = false;
  readonly #config: ModalRuntimeConfig;
  readonly #name: string;
  readonly #run: string | null;
  readonly #log: (message: string) => void;
  readonly #profile: ModalProfile | undefined;
  #account: Account | null = null;
  /** The provider's sandbox id, held privately as soon as SandboxCreate returns. */
  #handle: string | null = null;
  /** The published provider id (kept after teardown). */
  #id: string | null = null;
  #confirmedStopId: string | null = null;
  /** Key of this start's pending ledger entry while it is the only record of the sandbox. */
  #pendingKey: string | null = null;
  #stopped = false;
  #router: TaskRouter | null = null;
  #teardown: Promise<void> | null = null;
  /** Internal controllers of the execs in flight; teardown aborts them. */
  readonly #inflight = new Set<AbortController>();

  constructor(config: ModalRuntimeConfig, options: ModalRuntimeOptions) {
    this.#config = config;
    this.#name = sandboxName(options.name);
    this.#run = options.run ?? null;
    this.#log = options.log ?? (() => {});
    this.#profile = options.profile;
  }

  /** `{type: "modal", id: <sandbox id>}`; the id is kept after teardown. */
  get info(): RuntimeInfo {
    return { type: "modal", id: this.#id };
  }

  /** True once teardown began (reset by a later successful `start()`). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** The hard lifetime in seconds, as configured (the harness cap truncates it). */
  get timeoutS(): number {
    return this.#config.timeout;
  }

  /** The configured working directory inside the sandbox. */
  get workdir(): string {
    return this.#config.workdir;
  }

  #api(): ModalApi {
    if (this.#account === null) this.#account = accountFor(this.#profile ?? resolveModalProfile());
    return this.#account.api;
  }

  /** Creates the sandbox and waits until commands can run in it. */
  async start(options: { signal?: AbortSignal | undefined } = {}): Promise<void> {
    if (this.#handle !== null) {
      throw new SandboxError(
        this.#stopped
          ? "Cannot start the modal runtime: its previous sandbox is not confirmed terminated"
          : "Cannot start the modal runtime: it is already started",
        { hint: "Call stopConfirmed() before starting it again" },
      );
    }
    const signal = options.signal;
    if (signal?.aborted) {
      throw new SandboxError("Cannot start the modal runtime: the start was cancelled", {
        cause: signal.reason,
      });
    }
    try {
      await this.#provision(signal);
    } catch (e) {
      if (e instanceof SandboxError && e.message.startsWith("modal sandbox provisioning")) throw e;
      const Failure = e instanceof MissingCredentialsError ? MissingCredentialsError : SandboxError;
      throw new Failure(`modal sandbox provisioning failed: ${errorMessage(e)}`, {
        hint: e instanceof SandboxError ? e.hint : provisioningHint(e),
        cause: e,
      });
    }
  }

  async #provision(signal: AbortSignal | undefined): Promise<void> {
    const api = this.#api();
    const account = this.#account!;
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
    await acquireCreateSlot(PROVIDER, { perSecond: cfg.creates_per_sec }, signal);
    if (signal?.aborted) throw signal.reason;
    // A new sandbox is on its way: the last one's confirmed stop says nothing about it, so
    // a failure from here on leaves teardown to terminate whatever handle this start holds.
    this.#id = null;
    this.#confirmedStopId = null;
    // What the ledger keeps of this sandbox, pending and once its id is known.
    const journal = {
      provider: PROVIDER,
      name: this.#name,
      run: this.#run,
      config: {
        server_url: api.profile.serverUrl,
        environment: api.profile.environment,
        app_name: MODAL_APP_NAME,
      },
    };
    // Journaled before the request: a crash before the reply leaves an entry `gc` can
    // resolve by name (SandboxGetFromName).
    this.#pendingKey = recordPending(journal);
    let created: M.SandboxCreateResponse;
    try {
      created = await api.unary(
        "SandboxCreate",
        M.SandboxCreateRequest,
        M.SandboxCreateResponse,
        { appId, definition: sandboxDefinition(cfg, imageId, this.#name) as M.SandboxDefinition },
      );
    } catch (e) {
      if (isRefusal(e)) this.#forgetPending(); // Modal answered: nothing was created
      throw e;
    }
    const sandboxId = created.sandboxId;
    if (!sandboxId) throw new SandboxError("modal SandboxCreate returned no sandbox id");
    // Hold the handle before anything else can fail, so teardown can always terminate it.
    this.#handle = sandboxId;
    recordSandbox({ ...journal, id: sandboxId, created_at: new Date().toISOString() });
    this.#forgetPending();
    this.#id = sandboxId;
    this.#stopped = false;
    this.#confirmedStopId = null;

    const taskId = await waitForTask(api, sandboxId, signal);
    this.#router = await TaskRouter.open(api, taskId, signal);
    const made = await this.#exec(["mkdir", "-p", cfg.workdir], { signal });
    if (made.exitCode !== 0) {
      throw new SandboxError(
        `cannot create the workdir "${cfg.workdir}": ${decodeText(made.stderr).trim()}`,
        { hint: "Pick a workdir the image's user may create (runtime key workdir)" },
      );
    }
  }

  /** The router when the runtime can run commands, else a SandboxError naming `action`. */
  #live(action: string): TaskRouter {
    if (this.#stopped) {
      throw new SandboxError(`Cannot ${action}: runtime is stopped`, { hint: RESTART_HINT });
    }
    if (this.#router === null || this.#handle === null) {
      throw new SandboxError(`Cannot ${action}: runtime is not started`, { hint: RESTART_HINT });
    }
    return this.#router;
  }

  /** Runs one command in the sandbox (see {@link execInSandbox}). */
  #exec(argv: string[], options: ExecOptions = {}): Promise<ExecResult> {
    const router = this.#router;
    if (router === null) throw new SandboxError("modal exec: the runtime is not started");
    const target = { router, api: this.#api(), inflight: this.#inflight, log: this.#log };
    return execInSandbox(target, argv, options);
  }

  #resolve(path: string): string {
    return posix.resolve(this.#config.workdir, path);
  }

  /** Runs `argv` (no shell) in the workdir or `cwd`; never throws for a failing command. */
  async run(argv: string[], options: RunOptions = {}): Promise<ProgramResult> {
    this.#live(`run "${argv[0] ?? ""}"`);
    if (argv.length === 0 || argv[0] === "") {
      throw new SandboxError("Cannot run a command: argv is empty", {
        hint: 'Pass the program and its arguments, e.g. ["bash", "-lc", "ls"]',
      });
    }
    const stdin = options.stdin === undefined
      ? undefined
      : typeof options.stdin === "string"
      ? new TextEncoder().encode(options.stdin)
      : options.stdin;
    const r = await this.#exec(argv, {
      stdin,
      workdir: options.cwd === undefined ? this.#config.workdir : this.#resolve(options.cwd),
      env: options.env,
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return { exitCode: r.exitCode, stdout: decodeText(r.stdout), stderr: decodeText(r.stderr) };
  }

  /** Writes a file (parents created); relative paths are under the workdir. */
  async write(path: string, data: string | Uint8Array): Promise<void> {
    this.#live(`write "${path}"`);
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    await writeFile((argv, o) => this.#exec(argv, o), path, this.#resolve(path), bytes);
  }

  /** Reads a file; relative paths are under the workdir. Refuses files over `maxBytes`. */
  async read(path: string, options: ReadOptions = {}): Promise<Uint8Array> {
    this.#live(`read "${path}"`);
    return await readFile((argv) => this.#exec(argv), path, this.#resolve(path), options.maxBytes);
  }

  /** True while started, not stopped, and the sandbox runs `true`. */
  async alive(): Promise<boolean> {
    if (this.#stopped || this.#router === null || this.#handle === null) return false;
    try {
      return (await this.#exec(["true"])).exitCode === 0;
    } catch {
      return false;
    }
  }

  /** `https://` URL of the declared service port (8000), or null for any other port. */
  async expose(port: number): Promise<string | null> {
    const handle = this.#handle;
    if (handle === null || port !== SERVICE_PORT) return null;
    const res = await this.#api().sandboxGetTunnels(handle, 50);
    if (res.result?.status === M.GenericStatus.TIMEOUT) {
      throw new SandboxError("modal tunnels are not ready yet", {
        hint: "The sandbox has not opened its tunnel within 50 s; try again",
      });
    }
    const t = res.tunnels.find((x) => x.containerPort === port);
    if (!t) return null;
    return t.port === 443 ? `https://${t.host}` : `https://${t.host}:${t.port}`;
  }

  /** Drops this start's pending ledger entry (the id entry or a refusal replaced it). */
  #forgetPending(): void {
    if (this.#pendingKey === null) return;
    try {
      removePending(PROVIDER, this.#pendingKey);
      this.#pendingKey = null;
    } catch {
      // the entry stays; "vf sandboxes gc" resolves it by name
    }
  }

  #abortInflight(): void {
    for (const c of this.#inflight) c.abort();
  }

  #closeRouter(): void {
    this.#router?.close();
    this.#router = null;
  }

  /** Best-effort teardown: terminates the sandbox, logs a failure; never throws. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#teardown !== null) return await this.#teardown.catch(() => {});
    const handle = this.#handle;
    if (handle === null) return;
    this.#abortInflight();
    this.#teardown = (async () => {
      try {
        await this.#api().sandboxTerminate(handle);
        forget(handle);
        this.#forgetPending();
      } catch (e) {
        this.#log(`modal: terminating sandbox ${handle} failed: ${errorMessage(e)}`);
      } finally {
        // As verifiers: the handle is consumed by teardown, confirmed or not.
        if (this.#handle === handle) this.#handle = null;
        this.#closeRouter();
      }
    })();
    try {
      await this.#teardown;
    } finally {
      this.#teardown = null;
    }
  }

  /**
   * Terminates the sandbox and returns only when Modal confirmed it:
   * idempotent once confirmed; with no handle, resolves when no id was ever published and
   * throws when one was; a held handle is terminated even without a published id; a failed
   * terminate throws and keeps the handle so the next call retries.
   */
  async stopConfirmed(): Promise<void> {
    if (this.#teardown !== null) await this.#teardown.catch(() => {});
    const id = this.#id;
    if (id !== null && id === this.#confirmedStopId) return;
    const handle = this.#handle;
    if (handle === null) {
      if (id === null) return;
      throw new SandboxError(
        "modal sandbox termination cannot be confirmed without its live handle",
        {
          hint:
            `A best-effort stop() already consumed it; check sandbox ${id} with "vf sandboxes list"`,
        },
      );
    }
    this.#abortInflight();
    try {
      await this.#api().sandboxTerminate(handle);
    } catch (e) {
      throw new SandboxError(`modal sandbox ${handle} termination failed: ${errorMessage(e)}`, {
        hint: 'The sandbox may still run; call stopConfirmed() again, or run "vf sandboxes gc"',
        cause: e,
      });
    }
    if (id !== null) this.#confirmedStopId = id;
    this.#stopped = true;
    this.#handle = null;
    this.#closeRouter();
    forget(handle);
    this.#forgetPending();
  }
}
