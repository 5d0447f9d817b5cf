/**
 * The control plane of the Prime API (`/api/v1/sandbox…`): create with an idempotency key,
 * get, list, batch status with its GET fallback, delete, error context and expose, each with
 * the control-plane retry rules (retry_policy.ts). Every failure is a typed
 * {@link PrimeApiError} carrying the HTTP status.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { anySignal } from "../../../kit/mod.ts";
import { type ClientContext, USER_AGENT } from "./client_context.ts";
import { PrimeApiError } from "./errors.ts";
import { controlError } from "./failures.ts";
import { bodyJson, type HttpResponse, sendWithRetries, urlPath } from "./http.ts";
import {
  type BatchStatusResult,
  enc,
  type ErrorContext,
  fieldsOf,
  parseRecord,
  type SandboxPage,
  type SandboxRecord,
  str,
} from "./records.ts";
import { controlSchedule, type RequestKind, retryControl } from "./retry_policy.ts";

/** Which sandboxes one page of `GET /sandbox` lists. */
export interface ListQuery {
  /** From 1. */
  page: number;
  perPage: number;
  /** true: only sandboxes not in a terminal status. */
  isActive?: boolean;
  /** Every one must be on the sandbox. */
  labels?: readonly string[];
}

/** The control-plane calls of one client. */
export class PrimeControlPlane {
  readonly #ctx: ClientContext;
  #batchUnsupported = false;

  constructor(ctx: ClientContext) {
    this.#ctx = ctx;
  }

  /** One control-plane call with the control-plane retry rules (`retryControl`); throws for non-2xx. */
  async request(
    kind: RequestKind,
    method: string,
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<HttpResponse> {
    const ctx = this.#ctx;
    ctx.check();
    const url = `${ctx.baseUrl}/api/v1${path}`;
    const sig = anySignal([ctx.life, signal]);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return await sendWithRetries(
      ctx.fetch,
      {
        method,
        url,
        headers: {
          "Authorization": `Bearer ${ctx.apiKey}`,
          "Content-Type": "application/json",
          "Accept": "application/json",
          "User-Agent": USER_AGENT,
        },
        body: payload === undefined ? undefined : () => payload,
        timeoutMs: ctx.requestTimeoutMs,
        signal: sig,
      },
      { schedule: controlSchedule(ctx.backoffScale), shouldRetry: (e) => retryControl(kind, e) },
      (res) => controlError(res, method, urlPath(url)),
    );
  }

  /** `POST /sandbox` with a fresh idempotency key reused across this call's retries. */
  async createSandbox(request: Record<string, unknown>): Promise<SandboxRecord> {
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(request)) if (v !== null && v !== undefined) body[k] = v;
    if (body.team_id === undefined && this.#ctx.teamId) body.team_id = this.#ctx.teamId;
    body.idempotency_key = randomUUID().replaceAll("-", "");
    // never aborted by the caller: a create that reached the server must return its id
    const res = await this.request("idempotent_post", "POST", "/sandbox", body);
    const rec = parseRecord(bodyJson(res));
    if (!rec.id) {
      throw new PrimeApiError("HTTP 200: the create response has no sandbox id", {
        transport: "http",
        httpStatus: res.status,
        method: "POST",
        path: "/api/v1/sandbox",
      });
    }
    if (rec.vm !== null) this.#ctx.vm.set(rec.id, rec.vm);
    return rec;
  }

  /** `GET /sandbox/{id}`. */
  async getSandbox(id: string, signal?: AbortSignal): Promise<SandboxRecord> {
    const res = await this.request("get", "GET", `/sandbox/${enc(id)}`, undefined, signal);
    const rec = parseRecord(bodyJson(res));
    if (rec.vm !== null) this.#ctx.vm.set(rec.id || id, rec.vm);
    return rec;
  }

  /**
   * One page of `GET /sandbox` (the account's team, when one is set), as the SDK's `list()`
   * asks for it (sandbox.py@66fb4b70).
   */
  async listSandboxes(query: ListQuery, signal?: AbortSignal): Promise<SandboxPage> {
    const qs = new URLSearchParams({ page: String(query.page), per_page: String(query.perPage) });
    if (query.isActive !== undefined) qs.set("is_active", String(query.isActive));
    if (this.#ctx.teamId) qs.set("team_id", this.#ctx.teamId);
    for (const label of query.labels ?? []) qs.append("labels", label);
    const res = await this.request("get", "GET", `/sandbox?${qs}`, undefined, signal);
    const j = fieldsOf(bodyJson(res));
    const list = Array.isArray(j.sandboxes) ? j.sandboxes : [];
    return { sandboxes: list.map(parseRecord), hasNext: j.hasNext === true };
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
        const res = await this.request(
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
    await this.request("get", "DELETE", `/sandbox/${enc(id)}`);
  }

  /** `GET /sandbox/{id}/error-context`: the lightweight status used to classify failures. */
  async errorContext(id: string): Promise<ErrorContext> {
    const res = await this.request("get", "GET", `/sandbox/${enc(id)}/error-context`);
    const j = (bodyJson(res) ?? {}) as Record<string, unknown>;
    return {
      status: str(j.status),
      errorType: str(j.errorType) ?? str(j.error_type),
      errorMessage: str(j.errorMessage) ?? str(j.error_message),
    };
  }

  /** {@link errorContext}, or an empty context when that call fails (never throws). */
  async contextOrEmpty(id: string): Promise<ErrorContext> {
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
    if (await this.isVm(id)) {
      throw new PrimeApiError("Port exposure is not yet supported for VM sandboxes.", {
        transport: "http",
        detail: "Port exposure is not yet supported for VM sandboxes.",
        method: "POST",
        path: `/api/v1/sandbox/${id}/expose`,
      });
    }
    const res = await this.request(
      "post",
      "POST",
      `/sandbox/${enc(id)}/expose`,
      { port, protocol: "HTTP" },
      signal,
    );
    const url = str((bodyJson(res) as Record<string, unknown> | undefined)?.url) ?? "";
    return url.replace(/\/+$/, "");
  }

  /** Whether a sandbox is a VM: known from an earlier answer, else asked with a GET. */
  async isVm(id: string): Promise<boolean> {
    const known = this.#ctx.vm.get(id);
    if (known !== undefined) return known;
    const rec = await this.getSandbox(id);
    return rec.vm ?? false;
  }
}
