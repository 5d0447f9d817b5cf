/**
 * Our own `fetch`-based Prime sandbox client (no SDK): the control plane (create with an
 * idempotency key, get, batch status with fallback, delete, error context, gateway auth
 * with caching and coalesced refresh, expose) and the gateway (exec for containers, the
 * Connect command session for VMs, upload, download, read-file). Retries and error mapping
 * follow the official SDK (`packages/prime-sandboxes/src/prime_sandboxes/sandbox.py@66fb4b70`
 * and `core/client.py@66fb4b70`); every failure is a typed {@link PrimeApiError} carrying
 * the HTTP status. Where we differ from the SDK on purpose, the code says why.
 *
 * Over 400 lines: one `PrimeClient` class whose control-plane and gateway calls share its
 * private auth cache, VM flags, retry schedules and closed state; splitting it means first
 * moving that state into an object both halves hold.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { anySignal, sleep, VERSION } from "../../../kit/mod.ts";
import {
  type CommandSessionEvent,
  decodeStartResponse,
  encodeSendSignalRequest,
  encodeStartRequest,
} from "./command_session_pb.ts";
import { connectServerStream, connectUnary } from "./connect.ts";
import {
  PrimeApiError,
  PrimeCommandTimeoutError,
  PrimeConnectError,
  PrimeNotRunningError,
  TERMINAL_STATUSES,
} from "./errors.ts";
import {
  bodyJson,
  bodyText,
  type FetchLike,
  type HttpResponse,
  type RetrySchedule,
  sendOnce,
  urlPath,
  withRetries,
} from "./http.ts";
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

/** The camelCase `Sandbox` record (fields this client reads; the rest kept in `raw`). */
export interface SandboxRecord {
  id: string;
  name: string;
  status: string;
  vm: boolean | null;
  timeoutMinutes: number | null;
  idleTimeoutMinutes: number | null;
  pendingImageBuildId: string | null;
  errorType: string | null;
  errorMessage: string | null;
  raw: Record<string, unknown>;
}

/** One sandbox's status from the batch endpoint (or a GET fallback). */
export interface StatusItem {
  sandboxId: string;
  status: string;
  errorType: string | null;
  errorMessage: string | null;
  pendingImageBuildId: string | null;
}

/** What {@link PrimeClient.batchStatus} returns. */
export interface BatchStatusResult {
  statuses: Map<string, StatusItem>;
  /** Per-id errors: code `NOT_FOUND`, `FORBIDDEN`, `MANAGED`. */
  errors: Map<string, { code: string; message: string }>;
  /**
   * Per-id request failures of the GET fallback (batch status unsupported): they belong
   * to that sandbox alone, as in the SDK's `_BatchItemError` (sandbox.py@66fb4b70).
   */
  failures: Map<string, unknown>;
}

/** Gateway credentials of one sandbox. `token` is secret. */
export interface SandboxAuth {
  gatewayUrl: string;
  userNs: string;
  jobId: string;
  token: string;
  /** Epoch ms. */
  expiresAt: number;
}

/** What a finished command returned. */
export interface ExecResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** Options of {@link PrimeClient.exec}. */
export interface ExecOptions {
  cwd?: string | null;
  env?: Record<string, string>;
  /** Command timeout in seconds. @default 300 */
  timeoutS?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** What `read-file` returns. */
export interface ReadFileResult {
  content: string;
  size: number;
  totalSize: number | null;
  offset: number | null;
  truncated: boolean;
}

/**
 * What `/error-context` says about a sandbox. All fields are null when the call itself
 * failed: like the SDK (`_get_sandbox_error_context`, sandbox.py@66fb4b70) we carry on
 * with an empty context instead of replacing the error being classified.
 */
export interface ErrorContext {
  status: string | null;
  errorType: string | null;
  errorMessage: string | null;
}

type RequestKind = "get" | "post" | "idempotent_post";
type GatewayKind = "post" | "upload" | "get" | "read_file";

const USER_AGENT = `verifiers-ts/${VERSION}`;
const AUTH_REFRESH_MARGIN_MS = 60_000;
/** Delays after a gateway 409 while the sandbox is RUNNING (MAX_409_RETRIES = 4, sandbox.py@66fb4b70). */
const STATUS_CONFLICT_DELAYS_MS = [250, 500, 1000];
/** Statuses an idempotent gateway request retries (RETRYABLE_5XX_STATUSES, sandbox.py@66fb4b70). */
export const RETRYABLE_5XX: ReadonlySet<number> = new Set([500, 502, 503, 504, 524]);
/** The SDK's message when a gateway does not know a sandbox (`_execute_command_rest`). */
const GONE_MESSAGE =
  "Sandbox is no longer present on the runtime node. Please create a new sandbox.";

function str(v: unknown): string | null {
  return typeof v === "string" ? v : null;
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

function parseRecord(j: unknown): SandboxRecord {
  const o = (j && typeof j === "object" ? j : {}) as Record<string, unknown>;
  return {
    id: str(o.id) ?? "",
    name: str(o.name) ?? "",
    status: str(o.status) ?? "UNKNOWN",
    vm: typeof o.vm === "boolean" ? o.vm : null,
    timeoutMinutes: num(o.timeoutMinutes),
    idleTimeoutMinutes: num(o.idleTimeoutMinutes),
    pendingImageBuildId: str(o.pendingImageBuildId),
    errorType: str(o.errorType),
    errorMessage: str(o.errorMessage),
    raw: o,
  };
}

function detailOf(res: HttpResponse): string {
  const j = bodyJson(res) as Record<string, unknown> | undefined;
  if (j && typeof j === "object") {
    const d = j.detail;
    if (typeof d === "string") return d;
    if (d !== undefined) return JSON.stringify(d);
    if (typeof j.message === "string") return j.message;
  }
  return bodyText(res).slice(0, 500);
}

/** The error for a non-2xx control-plane response (wording of `APIClient.request`, core/client.py@66fb4b70). */
function controlError(res: HttpResponse, method: string, path: string): PrimeApiError {
  const detail = detailOf(res);
  const label = res.status === 401
    ? "Unauthorized"
    : res.status === 402
    ? "Payment required"
    : `HTTP ${res.status}`;
  return new PrimeApiError(`${label}: ${detail}`, {
    transport: "http",
    httpStatus: res.status,
    detail,
    method,
    path,
  });
}

/** A client of one Prime account. Cheap; the runtime makes a new one per start. */
export class PrimeClient {
  readonly baseUrl: string;
  readonly #apiKey: string;
  readonly #teamId: string | null;
  readonly #fetch: FetchLike;
  readonly #timeoutMs: number;
  readonly #scale: number;
  readonly #transferTimeoutMs: number;
  readonly #life = new AbortController();
  #closed = false;
  readonly #auth = new Map<string, SandboxAuth>();
  readonly #authInflight = new Map<string, Promise<SandboxAuth>>();
  readonly #vm = new Map<string, boolean>();
  #batchUnsupported = false;

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
    this.#apiKey = settings.apiKey;
    this.#teamId = settings.teamId;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#scale = options.backoffScale ?? 1;
    this.#transferTimeoutMs = options.transferTimeoutMs ?? 300_000;
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

  #check(): void {
    if (this.#closed) throw new Error("the Prime client is closed");
  }

  #controlSchedule(): RetrySchedule {
    return {
      attempts: 3,
      delayMs: (n) => Math.random() * Math.min(2000, 100 * 2 ** n) * this.#scale,
    };
  }

  /**
   * Gateway retries (sandbox.py@66fb4b70): 4 attempts; 1/2/4 s after a transport failure
   * (`wait_exponential(min=1)`), 250/500/1000 ms after an upload's 408/5xx
   * (`_should_retry_upload_error`).
   */
  #gatewaySchedule(kind: GatewayKind): RetrySchedule {
    return {
      attempts: 4,
      delayMs: (n, err) => {
        const base = kind === "upload" && err instanceof PrimeApiError && err.transport === "http"
          ? 250
          : 1000;
        return Math.min(30_000, base * 2 ** n) * this.#scale;
      },
    };
  }

  /** One control-plane call with the control-plane retry rules (`retryControl`); throws for non-2xx. */
  async #control(
    kind: RequestKind,
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<HttpResponse> {
    this.#check();
    const url = `${this.baseUrl}/api/v1${path}`;
    const sig = anySignal([this.#life.signal, signal]);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return await withRetries(
      this.#controlSchedule(),
      async () => {
        const res = await sendOnce(this.#fetch, {
          method,
          url,
          headers: {
            "Authorization": `Bearer ${this.#apiKey}`,
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
          },
          body: payload === undefined ? undefined : () => payload,
          timeoutMs: this.#timeoutMs,
          signal: sig,
        });
        if (res.status >= 200 && res.status < 300) return res;
        throw controlError(res, method, urlPath(url));
      },
      (e) => retryControl(kind, e),
      sig,
    );
  }

  /** `POST /sandbox` with a fresh idempotency key reused across this call's retries. */
  async createSandbox(request: Record<string, unknown>): Promise<SandboxRecord> {
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(request)) if (v !== null && v !== undefined) body[k] = v;
    if (body.team_id === undefined && this.#teamId) body.team_id = this.#teamId;
    body.idempotency_key = randomUUID().replaceAll("-", "");
    // never aborted by the caller: a create that reached the server must return its id
    const res = await this.#control("idempotent_post", "POST", "/sandbox", body);
    const rec = parseRecord(bodyJson(res));
    if (!rec.id) {
      throw new PrimeApiError("HTTP 200: the create response has no sandbox id", {
        transport: "http",
        httpStatus: res.status,
        method: "POST",
        path: "/api/v1/sandbox",
      });
    }
    if (rec.vm !== null) this.#vm.set(rec.id, rec.vm);
    return rec;
  }

  /** `GET /sandbox/{id}`. */
  async getSandbox(id: string, signal?: AbortSignal): Promise<SandboxRecord> {
    const res = await this.#control("get", "GET", `/sandbox/${enc(id)}`, undefined, signal);
    const rec = parseRecord(bodyJson(res));
    if (rec.vm !== null) this.#vm.set(rec.id || id, rec.vm);
    return rec;
  }

  /**
   * Status of up to 100 sandboxes in one request (`status:batchGet`). When the endpoint
   * answers 404/405 the client remembers it is unsupported and falls back to one GET per id.
   */
  async batchStatus(ids: string[], signal?: AbortSignal): Promise<BatchStatusResult> {
    const unique = [...new Set(ids)];
    const out: BatchStatusResult = { statuses: new Map(), errors: new Map(), failures: new Map() };
    if (unique.length === 0) return out;
    if (unique.length > 100) throw new RangeError("batchStatus takes at most 100 ids");
    if (!this.#batchUnsupported) {
      try {
        const res = await this.#control(
          "idempotent_post",
          "POST",
          "/sandbox/status:batchGet",
          { sandbox_ids: unique },
          signal,
        );
        const j = (bodyJson(res) ?? {}) as { statuses?: unknown; errors?: unknown };
        for (const s of Array.isArray(j.statuses) ? j.statuses : []) {
          const o = s as Record<string, unknown>;
          const id = str(o.sandbox_id);
          if (!id) continue;
          out.statuses.set(id, {
            sandboxId: id,
            status: str(o.status) ?? "UNKNOWN",
            errorType: str(o.error_type),
            errorMessage: str(o.error_message),
            pendingImageBuildId: str(o.pending_image_build_id),
          });
        }
        for (const e of Array.isArray(j.errors) ? j.errors : []) {
          const o = e as Record<string, unknown>;
          const id = str(o.sandbox_id);
          if (id) {
            out.errors.set(id, { code: str(o.code) ?? "UNKNOWN", message: str(o.message) ?? "" });
          }
        }
        return out;
      } catch (e) {
        if (!(e instanceof PrimeApiError) || (e.httpStatus !== 404 && e.httpStatus !== 405)) {
          throw e;
        }
        this.#batchUnsupported = true;
      }
    }
    await Promise.all(unique.map(async (id) => {
      try {
        const r = await this.getSandbox(id, signal);
        out.statuses.set(id, {
          sandboxId: id,
          status: r.status,
          errorType: r.errorType,
          errorMessage: r.errorMessage,
          pendingImageBuildId: r.pendingImageBuildId,
        });
      } catch (e) {
        if (e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 404) {
          out.errors.set(id, { code: "NOT_FOUND", message: e.detail });
        } else out.failures.set(id, e);
      }
    }));
    return out;
  }

  /** True once the batch endpoint answered 404/405. */
  get batchUnsupported(): boolean {
    return this.#batchUnsupported;
  }

  /** `DELETE /sandbox/{id}`; a 404 rejects with `httpStatus === 404` (the caller decides). */
  async deleteSandbox(id: string): Promise<void> {
    // teardown is never aborted by a caller's signal
    await this.#control("get", "DELETE", `/sandbox/${enc(id)}`);
    this.#auth.delete(id);
  }

  /** `GET /sandbox/{id}/error-context`: the lightweight status used to classify failures. */
  async errorContext(id: string): Promise<ErrorContext> {
    const res = await this.#control("get", "GET", `/sandbox/${enc(id)}/error-context`);
    const j = (bodyJson(res) ?? {}) as Record<string, unknown>;
    return {
      status: str(j.status),
      errorType: str(j.errorType) ?? str(j.error_type),
      errorMessage: str(j.errorMessage) ?? str(j.error_message),
    };
  }

  /** {@link errorContext}, or an empty context when that call fails (never throws). */
  async #contextOrEmpty(id: string): Promise<ErrorContext> {
    try {
      return await this.errorContext(id);
    } catch {
      return { status: null, errorType: null, errorMessage: null };
    }
  }

  /**
   * `POST /sandbox/{id}/expose` → the public URL (no trailing slash). VM sandboxes are
   * refused before any request, with the SDK's message (`_guard_vm_unsupported`).
   */
  async expose(id: string, port: number, signal?: AbortSignal): Promise<string> {
    if (await this.#isVm(id)) {
      throw new PrimeApiError("Port exposure is not yet supported for VM sandboxes.", {
        transport: "http",
        detail: "Port exposure is not yet supported for VM sandboxes.",
        method: "POST",
        path: `/api/v1/sandbox/${id}/expose`,
      });
    }
    const res = await this.#control(
      "post",
      "POST",
      `/sandbox/${enc(id)}/expose`,
      { port, protocol: "HTTP" },
      signal,
    );
    const url = str((bodyJson(res) as Record<string, unknown> | undefined)?.url) ?? "";
    return url.replace(/\/+$/, "");
  }

  /**
   * Gateway credentials, cached until `expires_at − 60 s`; concurrent refreshes of one id
   * share one request. `force` drops the cached value first (after a gateway 401).
   */
  async auth(id: string, options: { force?: boolean } = {}): Promise<SandboxAuth> {
    this.#check();
    if (options.force) this.#auth.delete(id);
    const cached = this.#auth.get(id);
    if (cached && Date.now() < cached.expiresAt - AUTH_REFRESH_MARGIN_MS) return cached;
    const inflight = this.#authInflight.get(id);
    if (inflight) return await inflight;
    const p = (async () => {
      let res: HttpResponse;
      try {
        // no body, as the SDK sends it (`get_or_refresh`)
        res = await this.#control("idempotent_post", "POST", `/sandbox/${enc(id)}/auth`);
      } catch (e) {
        if (e instanceof PrimeApiError && e.httpStatus === 404) {
          throw new PrimeNotRunningError(
            `sandbox ${id} is no longer running (the control plane does not know it)`,
            { ...errInit(e), status: "TERMINATED", errorType: "SANDBOX_NOT_FOUND", cause: e },
          );
        }
        throw e;
      }
      const j = (bodyJson(res) ?? {}) as Record<string, unknown>;
      const expires = parseExpiry(str(j.expires_at));
      const a: SandboxAuth = {
        gatewayUrl: (str(j.gateway_url) ?? "").replace(/\/+$/, ""),
        userNs: str(j.user_ns) ?? "",
        jobId: str(j.job_id) ?? "",
        token: str(j.token) ?? "",
        expiresAt: Number.isFinite(expires) ? expires : Date.now() + 5 * 60_000,
      };
      if (typeof j.is_vm === "boolean") this.#vm.set(id, j.is_vm);
      if (!a.gatewayUrl || !a.token) {
        throw new PrimeApiError("HTTP 200: the auth response lacks gateway_url or token", {
          transport: "http",
          httpStatus: 200,
          method: "POST",
          path: `/api/v1/sandbox/${id}/auth`,
        });
      }
      this.#auth.set(id, a);
      return a;
    })();
    this.#authInflight.set(id, p);
    try {
      return await p;
    } finally {
      this.#authInflight.delete(id);
    }
  }

  /** Records whether a sandbox is a VM (decides exec vs the Connect command session). */
  setVm(id: string, vm: boolean): void {
    this.#vm.set(id, vm);
  }

  async #isVm(id: string): Promise<boolean> {
    const known = this.#vm.get(id);
    if (known !== undefined) return known;
    const rec = await this.getSandbox(id);
    return rec.vm ?? false;
  }

  /**
   * One gateway request with the gateway retry rules, a single re-auth on 401, and the
   * SDK's 409 rule (`_should_retry_409`, sandbox.py@66fb4b70): ask `/error-context`; while
   * the sandbox is RUNNING retry after 250/500/1000 ms, else it is not running. A gateway
   * `sandbox_not_found` asks `/error-context` for the real reason (OOM, timeout, image
   * pull) before it becomes a not-running error. Other non-2xx answers throw typed errors.
   */
  async #gateway(
    id: string,
    kind: GatewayKind,
    method: string,
    sub: string,
    query: Record<string, string>,
    body: (() => BodyInit) | undefined,
    headers: Record<string, string>,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<HttpResponse> {
    const sig = anySignal([this.#life.signal, signal]);
    let reauthed = false;
    let conflicts = 0;
    for (;;) {
      this.#check();
      const a = await this.auth(id);
      const qs = new URLSearchParams(query).toString();
      const url = `${a.gatewayUrl}/${a.userNs}/${a.jobId}/${sub}${qs ? `?${qs}` : ""}`;
      try {
        return await withRetries(
          this.#gatewaySchedule(kind),
          async () => {
            const res = await sendOnce(this.#fetch, {
              method,
              url,
              headers: {
                "Authorization": `Bearer ${a.token}`,
                "User-Agent": USER_AGENT,
                ...headers,
              },
              body,
              timeoutMs,
              signal: sig,
            });
            if (res.status >= 200 && res.status < 300) return res;
            throw gatewayError(res, method, urlPath(url), id);
          },
          (e) => retryGateway(kind, e),
          sig,
        );
      } catch (e) {
        if (sig.aborted || !(e instanceof PrimeApiError)) throw e;
        if (!reauthed && e.transport === "http" && e.httpStatus === 401) {
          reauthed = true;
          this.#auth.delete(id);
          continue;
        }
        if (e.transport === "http" && e.httpStatus === 409) {
          const ctx = await this.#contextOrEmpty(id);
          if (ctx.status !== "RUNNING") throw notRunning(id, ctx, e);
          const delayMs = STATUS_CONFLICT_DELAYS_MS[conflicts];
          if (delayMs === undefined) {
            throw new PrimeApiError(
              `HTTP 409: sandbox ${id} returned 409 after ${
                conflicts + 1
              } attempts while RUNNING; this may be a transient DNS or gateway issue, please retry`,
              { ...errInit(e), cause: e },
            );
          }
          conflicts++;
          await sleep(delayMs * this.#scale, sig);
          continue;
        }
        if (isGatewayNotFound(e)) throw await this.#goneError(id, e);
        throw e;
      }
    }
  }

  /**
   * The not-running error for a sandbox the gateway does not know: TERMINATED, with the
   * error type `/error-context` names, else `SANDBOX_NOT_FOUND` (sandbox.py@66fb4b70).
   */
  async #goneError(id: string, e: PrimeApiError): Promise<PrimeNotRunningError> {
    const ctx = await this.#contextOrEmpty(id);
    return notRunning(id, {
      status: "TERMINATED",
      errorType: ctx.errorType ?? "SANDBOX_NOT_FOUND",
      errorMessage: ctx.errorMessage ?? GONE_MESSAGE,
    }, e);
  }

  /**
   * Runs a shell command and waits for it: `POST …/exec` on containers, the Connect
   * command session on VMs. Maps 409 (retried while the sandbox is RUNNING), 408 and
   * timeouts (command timeout, or not running when the sandbox is gone), and the gateway's
   * `sandbox_not_found` (not running, with the reason from `/error-context`).
   */
  async exec(id: string, command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const vm = await this.#isVm(id);
    return vm
      ? await this.#execVm(id, command, options)
      : await this.#execContainer(id, command, options);
  }

  async #execContainer(id: string, command: string, o: ExecOptions): Promise<ExecResult> {
    const timeoutS = o.timeoutS ?? 300;
    const payload = JSON.stringify({
      command,
      working_dir: o.cwd ?? null,
      env: o.env ?? {},
      sandbox_id: id,
      timeout: Math.max(1, Math.ceil(timeoutS)),
    });
    try {
      const res = await this.#gateway(
        id,
        "post",
        "POST",
        "exec",
        {},
        () => payload,
        { "Content-Type": "application/json" },
        // the + 5 s of the SDK: a command close to its timeout is not cut off by the client
        (timeoutS + 5) * 1000,
        o.signal,
      );
      const j = (bodyJson(res) ?? {}) as Record<string, unknown>;
      return {
        stdout: str(j.stdout) ?? "",
        stderr: str(j.stderr) ?? "",
        exitCode: num(j.exit_code) ?? 0,
      };
    } catch (e) {
      if (o.signal?.aborted || !(e instanceof PrimeApiError)) throw e;
      if (e.httpStatus === 408 || e.transport === "timeout") {
        throw await this.#timeoutError(id, e, timeoutS);
      }
      throw e;
    }
  }

  async #timeoutError(id: string, e: PrimeApiError, timeoutS: number): Promise<PrimeApiError> {
    const ctx = await this.#contextOrEmpty(id);
    if (ctx.status !== null && TERMINAL_STATUSES.has(ctx.status)) return notRunning(id, ctx, e);
    return new PrimeCommandTimeoutError(`Command timed out after ${timeoutS}s in sandbox ${id}`, {
      ...errInit(e),
      cause: e,
    });
  }

  async #execVm(id: string, command: string, o: ExecOptions): Promise<ExecResult> {
    const timeoutS = o.timeoutS ?? 300;
    const request = encodeStartRequest({
      command: {
        cmd: "/bin/bash",
        args: ["-c", command],
        envs: o.env ?? {},
        ...(o.cwd ? { cwd: o.cwd } : {}),
      },
      // `optional bool`: absent is not false; the SDK always sends it
      // (build_command_session_start_request, rpc_command_session.py@66fb4b70)
      stdin: false,
    });
    const sig = anySignal([this.#life.signal, o.signal]);
    for (let reauth = 0;; reauth++) {
      this.#check();
      const a = await this.auth(id);
      const stdout: Uint8Array[] = [];
      const stderr: Uint8Array[] = [];
      let end: Extract<CommandSessionEvent, { kind: "end" }> | null = null;
      let events = 0;
      try {
        for await (
          const msg of connectServerStream({
            fetch: this.#fetch,
            url: `${a.gatewayUrl}/${a.userNs}/${a.jobId}/command_session.CommandSession/Start`,
            token: a.token,
            request,
            timeoutMs: timeoutS * 1000,
            signal: sig,
            userAgent: USER_AGENT,
          })
        ) {
          events++;
          const ev = decodeStartResponse(msg);
          if (!ev) continue;
          if (ev.kind === "data") (ev.stream === "stderr" ? stderr : stdout).push(ev.bytes);
          else if (ev.kind === "end") end = ev;
        }
      } catch (e) {
        if (o.signal?.aborted) throw e;
        if (e instanceof PrimeConnectError) {
          if (e.connectCode === "unauthenticated" && events === 0 && reauth === 0) {
            this.#auth.delete(id);
            continue;
          }
          if (e.connectCode === "not_found") throw await this.#goneError(id, e);
          if (e.connectCode === "deadline_exceeded") {
            throw await this.#timeoutError(id, e, timeoutS);
          }
        }
        if (e instanceof PrimeApiError && e.transport === "timeout") {
          throw await this.#timeoutError(id, e, timeoutS);
        }
        throw e;
      }
      if (!end) {
        throw new PrimeApiError(
          `Request failed: the command session of sandbox ${id} ended without an end event`,
          {
            transport: "network",
            phase: "read",
            method: "POST",
            path: "command_session.CommandSession/Start",
          },
        );
      }
      // an `error` on the end event is ignored, as by the SDK: the exit code is the answer
      // (collect_command_session_start_event, rpc_command_session.py@66fb4b70)
      return { stdout: decodeAll(stdout), stderr: decodeAll(stderr), exitCode: end.exitCode };
    }
  }

  /**
   * Sends a signal to a command-session process (VM sandboxes), re-authenticating once on
   * `unauthenticated` and never retried otherwise (`_execute_process_control_rpc`).
   *
   * There is deliberately no counterpart of the SDK's `open_process` (a live process with
   * stdin writes and signals): the runtime contract (kit/runtime/runtime.ts) runs a program
   * to its end with its whole stdin given up front, which runtime.ts does the same way on
   * containers and VMs (an uploaded stdin file and a background job), so nothing here
   * would call it.
   */
  async sendSignal(id: string, pid: number, signal: number): Promise<void> {
    for (let reauth = 0;; reauth++) {
      const a = await this.auth(id);
      try {
        await connectUnary({
          fetch: this.#fetch,
          url: `${a.gatewayUrl}/${a.userNs}/${a.jobId}/command_session.CommandSession/SendSignal`,
          token: a.token,
          request: encodeSendSignalRequest({ session: { pid }, signal }),
          timeoutMs: 10_000,
          signal: this.#life.signal,
          userAgent: USER_AGENT,
        });
        return;
      } catch (e) {
        if (e instanceof PrimeConnectError && e.connectCode === "unauthenticated" && reauth === 0) {
          this.#auth.delete(id);
          continue;
        }
        throw e;
      }
    }
  }

  /** Uploads bytes to `path` (multipart, one `file` part). Parents must exist. */
  async upload(id: string, path: string, data: Uint8Array, signal?: AbortSignal): Promise<void> {
    const name = path.split("/").pop() || "file";
    await this.#gateway(
      id,
      "upload",
      "POST",
      "upload",
      { path, sandbox_id: id },
      () => {
        const fd = new FormData();
        fd.append("file", new Blob([data as BlobPart]), name);
        return fd;
      },
      {},
      this.#transferTimeoutMs,
      signal,
    );
  }

  /** Downloads a file's bytes; a missing file rejects with `httpStatus === 404`. */
  async download(id: string, path: string, signal?: AbortSignal): Promise<Uint8Array> {
    const res = await this.#gateway(
      id,
      "get",
      "GET",
      "download",
      { path, sandbox_id: id },
      undefined,
      {},
      this.#transferTimeoutMs,
      signal,
    );
    return res.body;
  }

  /**
   * Reads a text file window (`offset` may be negative: from the end). Every 404 is a
   * missing file and resolves to null, whatever the body says, as in the SDK (`read_file`
   * raises SandboxFileNotFoundError, sandbox.py@66fb4b70); 413 rejects.
   */
  async readFile(
    id: string,
    path: string,
    window: { offset?: number; length?: number; timeoutS?: number } = {},
    signal?: AbortSignal,
  ): Promise<ReadFileResult | null> {
    const timeoutS = window.timeoutS ?? 30;
    const query: Record<string, string> = { path };
    if (window.offset !== undefined) query.offset = String(window.offset);
    if (window.length !== undefined) query.length = String(window.length);
    let res: HttpResponse;
    try {
      res = await this.#gateway(
        id,
        "read_file",
        "GET",
        "read-file",
        query,
        undefined,
        {},
        timeoutS * 1000,
        signal,
      );
    } catch (e) {
      if (e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 404) return null;
      if (e instanceof PrimeApiError && e.transport === "timeout" && !signal?.aborted) {
        // the SDK names the file and the timeout (`read_file`, sandbox.py@66fb4b70)
        throw new PrimeApiError(`Read file timed out after ${timeoutS}s: ${path}`, {
          ...errInit(e),
          cause: e,
        });
      }
      throw e;
    }
    const j = (bodyJson(res) ?? {}) as Record<string, unknown>;
    return {
      content: str(j.content) ?? "",
      size: num(j.size) ?? 0,
      totalSize: num(j.total_size),
      offset: num(j.offset),
      truncated: j.truncated === true,
    };
  }
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

function decodeAll(chunks: Uint8Array[]): string {
  const size = chunks.reduce((n, c) => n + c.byteLength, 0);
  const all = new Uint8Array(size);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

function errInit(e: PrimeApiError) {
  return {
    transport: e.transport,
    httpStatus: e.httpStatus,
    detail: e.detail,
    phase: e.phase,
    errorCode: e.errorCode,
    method: e.method,
    path: e.path,
  };
}

/** What a not-running error says about its cause (`_build_terminated_message`, sandbox.py@66fb4b70). */
function reasonOf(ctx: ErrorContext): string {
  switch (ctx.errorType) {
    case "OOM_KILLED":
      return "it was terminated due to out-of-memory (OOM)";
    case "TIMEOUT":
      return "it exceeded its maximum runtime and was terminated";
    case "IMAGE_PULL_FAILED":
      return "it failed to start due to an image pull failure";
  }
  return ctx.status === "TERMINATED" ? "it was terminated" : "";
}

function notRunning(id: string, ctx: ErrorContext, e: PrimeApiError): PrimeNotRunningError {
  const why = [reasonOf(ctx), ctx.errorMessage].filter(Boolean).join("; ");
  const facts = [ctx.status ?? "status unknown", ctx.errorType].filter(Boolean).join(", ");
  return new PrimeNotRunningError(
    `sandbox ${id} is no longer running (${facts})${why ? `: ${why}` : ""}`,
    { ...errInit(e), status: ctx.status ?? "UNKNOWN", errorType: ctx.errorType, cause: e },
  );
}

/** Reads `expires_at`; a time without a zone is UTC, as in the SDK (`_auth_refresh_cutoff`). */
export function parseExpiry(text: string | null): number {
  if (text === null) return NaN;
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text.trim()) ? text.trim() : `${text.trim()}Z`;
  return Date.parse(zoned);
}

/**
 * True when an error says the gateway does not know the sandbox: its 502
 * `sandbox_not_found`, or Connect `not_found` (whatever HTTP status carried it). Walks the
 * cause chain, as `_is_retryable_reachability_error` does (sandbox.py@66fb4b70).
 */
export function isGatewayNotFound(err: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e = err; e instanceof Error && !seen.has(e); e = (e as { cause?: unknown }).cause) {
    seen.add(e);
    if (e instanceof PrimeConnectError && e.connectCode === "not_found") return true;
    if (
      e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === 502 &&
      e.errorCode === "sandbox_not_found"
    ) return true;
  }
  return false;
}

/** The error for a non-2xx gateway response. */
function gatewayError(res: HttpResponse, method: string, path: string, id: string): PrimeApiError {
  const j = bodyJson(res) as Record<string, unknown> | undefined;
  const code = j && typeof j === "object" ? str(j.error) : null;
  const detail = detailOf(res);
  if (res.status === 502 && code === "sandbox_not_found") {
    // #gateway replaces it with the reason from /error-context
    return new PrimeNotRunningError(
      `sandbox ${id} is no longer running (the gateway does not know it)`,
      {
        transport: "http",
        httpStatus: 502,
        detail,
        errorCode: code,
        method,
        path,
        status: "TERMINATED",
        errorType: "SANDBOX_NOT_FOUND",
      },
    );
  }
  const label = res.status === 401 ? "Unauthorized" : `HTTP ${res.status}`;
  return new PrimeApiError(`${label}: ${detail}`, {
    transport: "http",
    httpStatus: res.status,
    detail,
    errorCode: code,
    method,
    path,
  });
}

/**
 * Control-plane retry rules (`core/client.py@66fb4b70`): a failure before any response
 * (refused, or a disconnect before the answer) is retried for every request, POSTs too;
 * a response cut off mid-body only for GET/DELETE and idempotent POSTs; 502/503/504 only
 * for those; timeouts never. (fetch cannot tell a clean close before the answer — httpx's
 * RemoteProtocolError, retried by the SDK — from a reset — its ReadError, not retried for
 * POSTs — Bun reports both as ECONNRESET, so both count as "before any response".)
 */
function retryControl(kind: RequestKind, e: unknown): boolean {
  if (!(e instanceof PrimeApiError)) return false;
  if (e.transport === "network") return e.phase !== "read" || kind !== "post";
  if (e.transport === "timeout") return false;
  if (kind === "post") return false;
  return e.httpStatus === 502 || e.httpStatus === 503 || e.httpStatus === 504;
}

/**
 * Gateway retry rules (sandbox.py@66fb4b70: `_gateway_post_retry`, `_gateway_retry`,
 * `_read_file_retry`, `_should_retry_upload_error`). Transport: a failure before any
 * response is retried for every kind; a body cut off for GETs and read-file; a timeout
 * for read-file only. Status: never for exec; 408 and 500/502/503/504/524 for uploads and
 * read-file; 500/502/503/504/524 for downloads; never the gateway's `sandbox_not_found`.
 */
function retryGateway(kind: GatewayKind, e: unknown): boolean {
  if (!(e instanceof PrimeApiError) || e instanceof PrimeNotRunningError) return false;
  if (e.transport === "network") {
    return e.phase !== "read" || kind === "get" || kind === "read_file";
  }
  if (e.transport === "timeout") return kind === "read_file";
  const s = e.httpStatus ?? 0;
  if (kind === "post") return false;
  if (s === 408) return kind === "upload" || kind === "read_file";
  return RETRYABLE_5XX.has(s);
}
