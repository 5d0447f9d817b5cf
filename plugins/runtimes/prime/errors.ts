/**
 * Typed errors of the Prime client. Every failure carries how it happened (`transport`),
 * the HTTP status when there was one, and the server's `detail`; nothing else keys off the
 * message text. API keys and gateway tokens never appear in these messages.
 *
 * @module
 */

/** How a request failed: an HTTP error status, a timeout, or a network error. */
export type PrimeTransport = "http" | "timeout" | "network";

/**
 * For timeouts and network errors, how far the request got: `connect` = it never reached
 * the server (safe to retry anything), `send` = it may have reached the server before the
 * response headers, `read` = the response broke off mid-body.
 */
export type PrimeFailurePhase = "connect" | "send" | "read";

/** Fields of a {@link PrimeApiError}. */
export interface PrimeApiErrorInit {
  transport: PrimeTransport;
  httpStatus?: number | null;
  detail?: string;
  phase?: PrimeFailurePhase | null;
  /** The JSON `error` field of a gateway body, e.g. `sandbox_not_found`. */
  errorCode?: string | null;
  method: string;
  /** The URL path (never a query with secrets; we put none there). */
  path: string;
  cause?: unknown;
}

/** A failed Prime API request (control plane or gateway). */
export class PrimeApiError extends Error {
  readonly transport: PrimeTransport;
  readonly httpStatus: number | null;
  readonly detail: string;
  readonly phase: PrimeFailurePhase | null;
  readonly errorCode: string | null;
  readonly method: string;
  readonly path: string;

  constructor(message: string, init: PrimeApiErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "PrimeApiError";
    this.transport = init.transport;
    this.httpStatus = init.httpStatus ?? null;
    this.detail = init.detail ?? "";
    this.phase = init.phase ?? null;
    this.errorCode = init.errorCode ?? null;
    this.method = init.method;
    this.path = init.path;
  }
}

/** The sandbox is not running (gone, terminated, timed out, failed). */
export class PrimeNotRunningError extends PrimeApiError {
  /** The provider status (`TERMINATED`, `ERROR`, `TIMEOUT`, ...). */
  readonly status: string;
  /** The provider error type (`IMAGE_PULL_FAILED`, `OOM_KILLED`, `SANDBOX_NOT_FOUND`, ...). */
  readonly errorType: string | null;
  constructor(
    message: string,
    init: PrimeApiErrorInit & { status: string; errorType?: string | null },
  ) {
    super(message, init);
    this.name = "PrimeNotRunningError";
    this.status = init.status;
    this.errorType = init.errorType ?? null;
  }
}

/** A command ran past its timeout (exec 408, a client timeout, Connect deadline_exceeded). */
export class PrimeCommandTimeoutError extends PrimeApiError {
  constructor(message: string, init: PrimeApiErrorInit) {
    super(message, init);
    this.name = "PrimeCommandTimeoutError";
  }
}

/** The sandbox did not become usable in time (RUNNING or reachable). */
export class PrimeCreationTimeoutError extends PrimeApiError {
  /** `SANDBOX_CREATION_TIMEOUT` or `GATEWAY_REACHABILITY_TIMEOUT`. */
  readonly errorType: string;
  constructor(message: string, init: PrimeApiErrorInit & { errorType: string }) {
    super(message, init);
    this.name = "PrimeCreationTimeoutError";
    this.errorType = init.errorType;
  }
}

/** A Connect RPC failed with a Connect error code (`deadline_exceeded`, `not_found`, ...). */
export class PrimeConnectError extends PrimeApiError {
  /** The Connect code. */
  readonly connectCode: string;
  constructor(message: string, init: PrimeApiErrorInit & { connectCode: string }) {
    super(message, init);
    this.name = "PrimeConnectError";
    this.connectCode = init.connectCode;
  }
}

/** Statuses after which a sandbox never runs again. */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(["ERROR", "TERMINATED", "TIMEOUT"]);

/**
 * True for failures worth riding out (a gateway outage, a dropped connection): network
 * errors, timeouts, HTTP 502/503/504 (except the gateway's `sandbox_not_found`), and the
 * Connect codes `unavailable`, `aborted`, `deadline_exceeded`. An explicit predicate over
 * error kinds, never over message text.
 */
export function isTransientPrimeError(err: unknown): boolean {
  if (err instanceof PrimeNotRunningError) return false;
  if (err instanceof PrimeConnectError) {
    return ["unavailable", "aborted", "deadline_exceeded"].includes(err.connectCode);
  }
  if (!(err instanceof PrimeApiError)) return false;
  if (err.transport === "network" || err.transport === "timeout") return true;
  const s = err.httpStatus;
  return (s === 502 || s === 503 || s === 504) && err.errorCode !== "sandbox_not_found";
}
