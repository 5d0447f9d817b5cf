/**
 * Our own `fetch`-based Prime sandbox client (no SDK), one object over its parts: the
 * control plane (control_plane.ts: create with an idempotency key, get, list, batch status
 * with fallback, delete, error context, expose), gateway credentials with caching, coalesced
 * refresh and one re-login (gateway_auth.ts), the gateway request with its 409 and
 * not-found rules (gateway.ts), commands on containers and VMs (commands.ts) and file
 * transfer (files.ts). Retries and error mapping follow the official SDK
 * (`packages/prime-sandboxes/src/prime_sandboxes/sandbox.py@66fb4b70` and
 * `core/client.py@66fb4b70`; retry_policy.ts, failures.ts); every failure is a typed
 * {@link PrimeApiError} carrying the HTTP status. Where we differ from the SDK on purpose,
 * the code says why.
 *
 * @module
 */
import type { ClientContext } from "./client_context.ts";
import { PrimeCommands } from "./commands.ts";
import { type ListQuery, PrimeControlPlane } from "./control_plane.ts";
import { PrimeApiError } from "./errors.ts";
import { PrimeFiles, type ReadFileWindow } from "./files.ts";
import { GatewayAuth } from "./gateway_auth.ts";
import { PrimeGateway } from "./gateway.ts";
import type { FetchLike } from "./http.ts";
import type {
  BatchStatusResult,
  ErrorContext,
  ExecOptions,
  ExecResult,
  ReadFileResult,
  SandboxAuth,
  SandboxPage,
  SandboxRecord,
} from "./records.ts";
import type { PrimeSettings } from "./settings.ts";

/** Options of a {@link PrimeClient}. */
export interface PrimeClientOptions {
  /** @default globalThis.fetch */
  fetch?: FetchLike;
  /** Control-plane request timeout. @default 30000 */
  requestTimeoutMs?: number;
  /** Multiplies every retry backoff (1 in production; tests shrink it). @default 1 */
  backoffScale?: number;
  /** Timeout of an upload or a download. @default 300000 */
  transferTimeoutMs?: number;
}

/** A client of one Prime account. Cheap; the runtime makes a new one per start. */
export class PrimeClient {
  readonly baseUrl: string;
  readonly #life = new AbortController();
  #closed = false;
  readonly #control: PrimeControlPlane;
  readonly #auth: GatewayAuth;
  readonly #commands: PrimeCommands;
  readonly #files: PrimeFiles;
  readonly #vm: Map<string, boolean>;

  constructor(settings: PrimeSettings, options: PrimeClientOptions = {}) {
    if (!settings.apiKey) {
      throw new PrimeApiError("Unauthorized: no Prime API key", {
        transport: "http",
        httpStatus: 401,
        method: "-",
        path: "-",
      });
    }
    this.baseUrl = settings.baseUrl;
    const ctx: ClientContext = {
      baseUrl: settings.baseUrl,
      apiKey: settings.apiKey,
      teamId: settings.teamId,
      fetch: options.fetch ?? ((input, init) => fetch(input, init)),
      requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
      backoffScale: options.backoffScale ?? 1,
      transferTimeoutMs: options.transferTimeoutMs ?? 300_000,
      life: this.#life.signal,
      check: () => {
        if (this.#closed) throw new Error("the Prime client is closed");
      },
      vm: new Map(),
    };
    this.#vm = ctx.vm;
    this.#control = new PrimeControlPlane(ctx);
    this.#auth = new GatewayAuth(ctx, this.#control);
    const gateway = new PrimeGateway(ctx, this.#control, this.#auth);
    this.#commands = new PrimeCommands(ctx, this.#control, this.#auth, gateway);
    this.#files = new PrimeFiles(gateway, ctx.transferTimeoutMs);
  }

  /** True once {@link close} ran. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the client: requests in flight are aborted, later ones refused. Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#life.abort(new Error("the Prime client was closed"));
    this.#auth.clear();
  }

  /** `POST /sandbox` with a fresh idempotency key reused across this call's retries. */
  createSandbox(request: Record<string, unknown>): Promise<SandboxRecord> {
    return this.#control.createSandbox(request);
  }

  /** `GET /sandbox/{id}`. */
  getSandbox(id: string, signal?: AbortSignal): Promise<SandboxRecord> {
    return this.#control.getSandbox(id, signal);
  }

  /** One page of `GET /sandbox` (the account's team, when one is set). */
  listSandboxes(query: ListQuery, signal?: AbortSignal): Promise<SandboxPage> {
    return this.#control.listSandboxes(query, signal);
  }

  /**
   * Status of up to 100 sandboxes in one request (`status:batchGet`). When the endpoint
   * answers 404/405 the client remembers it is unsupported and falls back to one GET per id.
   */
  batchStatus(ids: string[], signal?: AbortSignal): Promise<BatchStatusResult> {
    return this.#control.batchStatus(ids, signal);
  }

  /** True once the batch endpoint answered 404/405. */
  get batchUnsupported(): boolean {
    return this.#control.batchUnsupported;
  }

  /** `DELETE /sandbox/{id}`; a 404 rejects with `httpStatus === 404` (the caller decides). */
  async deleteSandbox(id: string): Promise<void> {
    await this.#control.deleteSandbox(id);
    this.#auth.forget(id);
  }

  /** `GET /sandbox/{id}/error-context`: the lightweight status used to classify failures. */
  errorContext(id: string): Promise<ErrorContext> {
    return this.#control.errorContext(id);
  }

  /**
   * `POST /sandbox/{id}/expose` → the public URL (no trailing slash). VM sandboxes are
   * refused before any request, with the SDK's message (`_guard_vm_unsupported`).
   */
  expose(id: string, port: number, signal?: AbortSignal): Promise<string> {
    return this.#control.expose(id, port, signal);
  }

  /**
   * Gateway credentials, cached until `expires_at − 60 s`; concurrent refreshes of one id
   * share one request. `force` drops the cached value first (after a gateway 401).
   */
  auth(id: string, options: { force?: boolean } = {}): Promise<SandboxAuth> {
    return this.#auth.get(id, options);
  }

  /** Records whether a sandbox is a VM (decides exec vs the Connect command session). */
  setVm(id: string, vm: boolean): void {
    this.#vm.set(id, vm);
  }

  /**
   * Runs a shell command and waits for it: `POST …/exec` on containers, the Connect
   * command session on VMs (commands.ts).
   */
  exec(id: string, command: string, options: ExecOptions = {}): Promise<ExecResult> {
    return this.#commands.exec(id, command, options);
  }

  /** Sends a signal to a command-session process (VM sandboxes; commands.ts). */
  sendSignal(id: string, pid: number, signal: number): Promise<void> {
    return this.#commands.sendSignal(id, pid, signal);
  }

  /** Uploads bytes to `path` (multipart, one `file` part). Parents must exist. */
  upload(id: string, path: string, data: Uint8Array, signal?: AbortSignal): Promise<void> {
    return this.#files.upload(id, path, data, signal);
  }

  /** Downloads a file's bytes; a missing file rejects with `httpStatus === 404`. */
  download(id: string, path: string, signal?: AbortSignal): Promise<Uint8Array> {
    return this.#files.download(id, path, signal);
  }

  /**
   * Reads a text file window (`offset` may be negative: from the end); a missing file
   * resolves to null (files.ts).
   */
  readFile(
    id: string,
    path: string,
    window: ReadFileWindow = {},
    signal?: AbortSignal,
  ): Promise<ReadFileResult | null> {
    return this.#files.readFile(id, path, window, signal);
  }
}
