/**
 * One request to a sandbox's gateway (`{gateway_url}/{user_ns}/{job_id}/…`) with the
 * gateway retry rules (retry_policy.ts), a single re-login on 401 (gateway_auth.ts), and
 * the SDK's 409 and `sandbox_not_found` rules (sandbox.py@66fb4b70).
 *
 * @module
 */
import { anySignal, sleep } from "../../../kit/mod.ts";
import { type ClientContext, USER_AGENT } from "./client_context.ts";
import type { PrimeControlPlane } from "./control_plane.ts";
import { PrimeApiError } from "./errors.ts";
import { errInit, gatewayError, goneError, isGatewayNotFound, notRunning } from "./failures.ts";
import type { GatewayAuth } from "./gateway_auth.ts";
import { type HttpResponse, sendWithRetries, urlPath } from "./http.ts";
import {
  type GatewayKind,
  gatewaySchedule,
  retryGateway,
  STATUS_CONFLICT_DELAYS_MS,
} from "./retry_policy.ts";

/** One gateway request. */
export interface GatewayRequest {
  /** Decides the retry rules. */
  kind: GatewayKind;
  method: string;
  /** The path below the sandbox's gateway prefix (`exec`, `upload`, `read-file`, …). */
  sub: string;
  query?: Record<string, string>;
  /** Made fresh for every attempt. */
  body?: () => BodyInit;
  headers?: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** True for an HTTP answer with this status. */
function isHttpStatus(e: unknown, status: number): e is PrimeApiError {
  return e instanceof PrimeApiError && e.transport === "http" && e.httpStatus === status;
}

/** The gateway requests of one client. */
export class PrimeGateway {
  readonly #ctx: ClientContext;
  readonly #control: PrimeControlPlane;
  readonly #auth: GatewayAuth;

  constructor(ctx: ClientContext, control: PrimeControlPlane, auth: GatewayAuth) {
    this.#ctx = ctx;
    this.#control = control;
    this.#auth = auth;
  }

  /**
   * One gateway request with the gateway retry rules, a single re-login on 401, and the
   * SDK's 409 rule (`_should_retry_409`, sandbox.py@66fb4b70): ask `/error-context`; while
   * the sandbox is RUNNING retry after 250/500/1000 ms, else it is not running. A gateway
   * `sandbox_not_found` asks `/error-context` for the real reason (OOM, timeout, image
   * pull) before it becomes a not-running error. Other non-2xx answers throw typed errors.
   */
  async request(id: string, req: GatewayRequest): Promise<HttpResponse> {
    const ctx = this.#ctx;
    const { kind, method, timeoutMs } = req;
    const sig = anySignal([ctx.life, req.signal]);
    const qs = new URLSearchParams(req.query ?? {}).toString();
    let conflicts = 0;
    return await this.#auth.withAuth(id, async (a) => {
      const url = `${a.gatewayUrl}/${a.userNs}/${a.jobId}/${req.sub}${qs ? `?${qs}` : ""}`;
      const headers = { "Authorization": `Bearer ${a.token}`, "User-Agent": USER_AGENT };
      for (;;) {
        try {
          return await sendWithRetries(
            ctx.fetch,
            {
              method,
              url,
              headers: { ...headers, ...req.headers },
              body: req.body,
              timeoutMs,
              signal: sig,
            },
            {
              schedule: gatewaySchedule(kind, ctx.backoffScale),
              shouldRetry: (e) => retryGateway(kind, e),
            },
            (res) => gatewayError(res, method, urlPath(url), id),
          );
        } catch (e) {
          if (sig.aborted || !(e instanceof PrimeApiError) || isHttpStatus(e, 401)) throw e;
          if (isHttpStatus(e, 409)) {
            const status = await this.#control.contextOrEmpty(id);
            if (status.status !== "RUNNING") throw notRunning(id, status, e);
            const delay = STATUS_CONFLICT_DELAYS_MS[conflicts];
            if (delay === undefined) {
              throw new PrimeApiError(
                `HTTP 409: sandbox ${id} returned 409 after ${
                  conflicts + 1
                } attempts while RUNNING; this may be a transient DNS or gateway issue, please retry`,
                { ...errInit(e), cause: e },
              );
            }
            conflicts++;
            await sleep(delay * ctx.backoffScale, sig);
            continue;
          }
          if (isGatewayNotFound(e)) {
            throw goneError(id, await this.#control.contextOrEmpty(id), e);
          }
          throw e;
        }
      }
    }, (e) => !sig.aborted && isHttpStatus(e, 401));
  }
}
