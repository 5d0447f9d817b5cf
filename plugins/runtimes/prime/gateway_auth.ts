/**
 * Gateway credentials of a sandbox (`POST /sandbox/{id}/auth`): cached until
 * `expires_at − 60 s`, one request shared by concurrent refreshes, and the single re-login
 * every gateway call makes when the gateway refuses its token (`get_or_refresh` and the
 * 401 / `unauthenticated` handling of sandbox.py and rpc_command_session.py@66fb4b70).
 *
 * @module
 */
import type { ClientContext } from "./client_context.ts";
import type { PrimeControlPlane } from "./control_plane.ts";
import { PrimeApiError, PrimeNotRunningError } from "./errors.ts";
import { errInit } from "./failures.ts";
import { bodyJson, type HttpResponse } from "./http.ts";
import { enc, type SandboxAuth, str } from "./records.ts";

const AUTH_REFRESH_MARGIN_MS = 60_000;

/** Reads `expires_at`; a time without a zone is UTC, as in the SDK (`_auth_refresh_cutoff`). */
export function parseExpiry(text: string | null): number {
  if (text === null) return NaN;
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/i.test(text.trim()) ? text.trim() : `${text.trim()}Z`;
  return Date.parse(zoned);
}

/** The gateway credentials of one client's sandboxes. */
export class GatewayAuth {
  readonly #ctx: ClientContext;
  readonly #control: PrimeControlPlane;
  readonly #cache = new Map<string, SandboxAuth>();
  readonly #inflight = new Map<string, Promise<SandboxAuth>>();

  constructor(ctx: ClientContext, control: PrimeControlPlane) {
    this.#ctx = ctx;
    this.#control = control;
  }

  /**
   * Gateway credentials, cached until `expires_at − 60 s`; concurrent refreshes of one id
   * share one request. `force` drops the cached value first (after a gateway 401).
   */
  async get(id: string, options: { force?: boolean } = {}): Promise<SandboxAuth> {
    this.#ctx.check();
    if (options.force) this.#cache.delete(id);
    const cached = this.#cache.get(id);
    if (cached && Date.now() < cached.expiresAt - AUTH_REFRESH_MARGIN_MS) return cached;
    const inflight = this.#inflight.get(id);
    if (inflight) return await inflight;
    const p = this.#fetchAuth(id);
    this.#inflight.set(id, p);
    try {
      return await p;
    } finally {
      this.#inflight.delete(id);
    }
  }

  /**
   * Runs one gateway call with the sandbox's credentials. When `refused` says the gateway
   * turned the token down, the cached credentials are dropped and the call runs once more
   * with fresh ones; any other failure, or a second refusal, is thrown as it is.
   */
  async withAuth<T>(
    id: string,
    call: (auth: SandboxAuth) => Promise<T>,
    refused: (err: unknown) => boolean,
  ): Promise<T> {
    for (let relogin = 0;; relogin++) {
      const auth = await this.get(id);
      try {
        return await call(auth);
      } catch (e) {
        if (relogin > 0 || !refused(e)) throw e;
        this.#cache.delete(id);
      }
    }
  }

  /** Drops a sandbox's credentials (it was deleted). */
  forget(id: string): void {
    this.#cache.delete(id);
  }

  /** Drops every cached credential (the client closed). */
  clear(): void {
    this.#cache.clear();
  }

  async #fetchAuth(id: string): Promise<SandboxAuth> {
    let res: HttpResponse;
    try {
      // no body, as the SDK sends it (`get_or_refresh`)
      res = await this.#control.request("idempotent_post", "POST", `/sandbox/${enc(id)}/auth`);
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
    if (typeof j.is_vm === "boolean") this.#ctx.vm.set(id, j.is_vm);
    if (!a.gatewayUrl || !a.token) {
      throw new PrimeApiError("HTTP 200: the auth response lacks gateway_url or token", {
        transport: "http",
        httpStatus: 200,
        method: "POST",
        path: `/api/v1/sandbox/${id}/auth`,
      });
    }
    this.#cache.set(id, a);
    return a;
  }
}
