/**
 * What a Prime answer means when it is not a success: the typed error for a non-2xx
 * control-plane or gateway response (wording of `APIClient.request`, core/client.py@66fb4b70),
 * and the not-running error built from `/error-context` (`_build_terminated_message`,
 * sandbox.py@66fb4b70). Pure functions: the requests they classify are made elsewhere.
 *
 * @module
 */
import { PrimeApiError, PrimeConnectError, PrimeNotRunningError } from "./errors.ts";
import { bodyJson, bodyText, type HttpResponse } from "./http.ts";
import { type ErrorContext, str } from "./records.ts";

/** The SDK's message when a gateway does not know a sandbox (`_execute_command_rest`). */
const GONE_MESSAGE =
  "Sandbox is no longer present on the runtime node. Please create a new sandbox.";

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
export function controlError(res: HttpResponse, method: string, path: string): PrimeApiError {
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

/** The error for a non-2xx gateway response. */
export function gatewayError(
  res: HttpResponse,
  method: string,
  path: string,
  id: string,
): PrimeApiError {
  const j = bodyJson(res) as Record<string, unknown> | undefined;
  const code = j && typeof j === "object" ? str(j.error) : null;
  const detail = detailOf(res);
  if (res.status === 502 && code === "sandbox_not_found") {
    // the gateway request replaces it with the reason from /error-context
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

/** The fields of an error, to build another error that says more about it. */
export function errInit(e: PrimeApiError) {
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

/** The error for a sandbox that is no longer running, with the reason its context gives. */
export function notRunning(id: string, ctx: ErrorContext, e: PrimeApiError): PrimeNotRunningError {
  const why = [reasonOf(ctx), ctx.errorMessage].filter(Boolean).join("; ");
  const facts = [ctx.status ?? "status unknown", ctx.errorType].filter(Boolean).join(", ");
  return new PrimeNotRunningError(
    `sandbox ${id} is no longer running (${facts})${why ? `: ${why}` : ""}`,
    { ...errInit(e), status: ctx.status ?? "UNKNOWN", errorType: ctx.errorType, cause: e },
  );
}

/**
 * The not-running error for a sandbox the gateway does not know: TERMINATED, with the
 * error type `/error-context` names, else `SANDBOX_NOT_FOUND` (sandbox.py@66fb4b70).
 */
export function goneError(id: string, ctx: ErrorContext, e: PrimeApiError): PrimeNotRunningError {
  return notRunning(id, {
    status: "TERMINATED",
    errorType: ctx.errorType ?? "SANDBOX_NOT_FOUND",
    errorMessage: ctx.errorMessage ?? GONE_MESSAGE,
  }, e);
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
