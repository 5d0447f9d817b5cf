/**
 * When a Prime request is tried again, and after how long: the control-plane rules of
 * `core/client.py@66fb4b70` and the gateway rules of `sandbox.py@66fb4b70`. Decided on the
 * kind of a {@link PrimeApiError}, never on its message.
 *
 * @module
 */
import { PrimeApiError, PrimeNotRunningError } from "./errors.ts";
import type { RetrySchedule } from "./http.ts";

/** How a control-plane request may be retried: a plain POST is not idempotent. */
export type RequestKind = "get" | "post" | "idempotent_post";
/** What a gateway request does (its retry rules differ). */
export type GatewayKind = "post" | "upload" | "get" | "read_file";

/** Statuses an idempotent gateway request retries (RETRYABLE_5XX_STATUSES, sandbox.py@66fb4b70). */
export const RETRYABLE_5XX: ReadonlySet<number> = new Set([500, 502, 503, 504, 524]);
/** Delays after a gateway 409 while the sandbox is RUNNING (MAX_409_RETRIES = 4, sandbox.py@66fb4b70). */
export const STATUS_CONFLICT_DELAYS_MS: readonly number[] = [250, 500, 1000];

/** Control-plane retries: 3 attempts, full-jitter backoff from 100 ms up to 2 s. */
export function controlSchedule(scale: number): RetrySchedule {
  return {
    attempts: 3,
    delayMs: (n) => Math.random() * Math.min(2000, 100 * 2 ** n) * scale,
  };
}

/**
 * Gateway retries (sandbox.py@66fb4b70): 4 attempts; 1/2/4 s after a transport failure
 * (`wait_exponential(min=1)`), 250/500/1000 ms after an upload's 408/5xx
 * (`_should_retry_upload_error`).
 */
export function gatewaySchedule(kind: GatewayKind, scale: number): RetrySchedule {
  return {
    attempts: 4,
    delayMs: (n, err) => {
      const base = kind === "upload" && err instanceof PrimeApiError && err.transport === "http"
        ? 250
        : 1000;
      return Math.min(30_000, base * 2 ** n) * scale;
    },
  };
}

/**
 * Control-plane retry rules (`core/client.py@66fb4b70`): a failure before any response
 * (refused, or a disconnect before the answer) is retried for every request, POSTs too;
 * a response cut off mid-body only for GET/DELETE and idempotent POSTs; 502/503/504 only
 * for those; timeouts never. (fetch cannot tell a clean close before the answer — httpx's
 * RemoteProtocolError, retried by the SDK — from a reset — its ReadError, not retried for
 * POSTs — Bun reports both as ECONNRESET, so both count as "before any response".)
 */
export function retryControl(kind: RequestKind, e: unknown): boolean {
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
export function retryGateway(kind: GatewayKind, e: unknown): boolean {
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
