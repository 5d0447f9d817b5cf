/**
 * Waiting for a new sandbox to become usable, as the SDK's `wait_for_creation`
 * (`packages/prime-sandboxes/src/prime_sandboxes/sandbox.py@66fb4b70`): poll its status
 * through the shared {@link StatusPoller} until RUNNING (a first-use image build gets its
 * own, longer budget), then probe the gateway with `echo 'sandbox ready'` until it
 * answers, riding out the failures a freshly started sandbox is known to produce.
 *
 * @module
 */
import type { PrimeClient } from "./client.ts";
import { isGatewayNotFound } from "./failures.ts";
import { RETRYABLE_5XX } from "./retry_policy.ts";
import {
  isTransientPrimeError,
  PrimeApiError,
  PrimeCommandTimeoutError,
  PrimeConnectError,
  PrimeCreationTimeoutError,
  PrimeNotRunningError,
  TERMINAL_STATUSES,
} from "./errors.ts";
import type { StatusPoller } from "./status_poller.ts";

/** Timing of a creation wait (production defaults; tests shrink them). */
export interface CreationTiming {
  /** Budget to reach RUNNING, and again to become reachable. @default 355000 (max_attempts 180) */
  budgetMs: number;
  /** Budget of a first-use image build. @default 3000000 */
  imageBuildBudgetMs: number;
  /** Poll interval during an image build. @default 10000 */
  imageBuildPollMs: number;
  /** First backoff delay (grows ×1.5). @default 1000 */
  baseDelayMs: number;
  /** Largest backoff delay. @default 10000 */
  maxDelayMs: number;
  /** Timeout of one reachability probe, seconds. @default 10 */
  probeTimeoutS: number;
}

/** The production timing. */
export const DEFAULT_CREATION_TIMING: CreationTiming = {
  budgetMs: 355_000,
  imageBuildBudgetMs: 3_000_000,
  imageBuildPollMs: 10_000,
  baseDelayMs: 1000,
  maxDelayMs: 10_000,
  probeTimeoutS: 10,
};

/** What the wait observed. */
export interface CreationOutcome {
  /** True when the platform built the image first (PENDING with a pending build id). */
  imageBuilt: boolean;
}

/** Backoff `min(base·1.5^i, max)` ± 25 % jitter. */
function backoff(t: CreationTiming, i: number): number {
  const d = Math.min(t.baseDelayMs * 1.5 ** i, t.maxDelayMs);
  return d * (0.75 + Math.random() * 0.5);
}

/** True for probe failures that mean "not reachable yet" (`_is_retryable_reachability_error`, sandbox.py@66fb4b70). */
export function isRetryableProbeError(e: unknown): boolean {
  // a RUNNING status can lead the gateway's registration: its "not found" is normal while
  // starting; the control plane not knowing the sandbox is not (no gateway cause)
  if (e instanceof PrimeNotRunningError) return isGatewayNotFound(e);
  if (e instanceof PrimeCommandTimeoutError) return true;
  if (e instanceof PrimeConnectError) {
    return ["aborted", "deadline_exceeded", "unavailable"].includes(e.connectCode);
  }
  if (e instanceof PrimeApiError && (e.transport === "network" || e.transport === "timeout")) {
    return true;
  }
  if (e instanceof PrimeApiError && e.transport === "http") {
    const s = e.httpStatus ?? 0;
    return s === 408 || s === 409 || RETRYABLE_5XX.has(s);
  }
  return false;
}

/**
 * Waits until sandbox `id` is RUNNING and its gateway runs commands. As the SDK's
 * `wait_for_creation` (sandbox.py@66fb4b70), every round re-reads the status before it
 * probes, so a sandbox that dies after RUNNING (OOM, lifetime) is reported with its cause
 * at the next round instead of at the end of the reachability budget.
 */
export async function waitForCreation(
  client: PrimeClient,
  poller: StatusPoller,
  id: string,
  timing: CreationTiming,
  options: { signal?: AbortSignal | undefined; log?: ((m: string) => void) | undefined } = {},
): Promise<CreationOutcome> {
  const { signal, log } = options;
  let deadline = Date.now() + timing.budgetMs;
  let buildDeadline: number | null = null;
  let imageBuilt = false;
  let reachability = false;
  let last: unknown = null;
  let delay = 0;
  for (let i = 0;; i++) {
    let r;
    try {
      r = await poller.poll(id, delay, signal);
    } catch (e) {
      // a status outage is ridden out until the deadline; anything else ends the wait
      if (signal?.aborted || !isTransientPrimeError(e) || Date.now() >= deadline) throw e;
      delay = Math.min(backoff(timing, i), Math.max(0, deadline - Date.now()));
      continue;
    }
    if (r.kind === "error") {
      throw new PrimeNotRunningError(
        `sandbox ${id} disappeared while starting (${r.code}${r.message ? `: ${r.message}` : ""})`,
        {
          transport: "http",
          httpStatus: r.code === "NOT_FOUND" ? 404 : null,
          method: "POST",
          path: "/api/v1/sandbox/status:batchGet",
          status: "TERMINATED",
          errorType: r.code === "NOT_FOUND" ? "SANDBOX_NOT_FOUND" : r.code,
        },
      );
    }
    const st = r.status;
    if (TERMINAL_STATUSES.has(st.status)) {
      const why = [st.errorType, st.errorMessage].filter(Boolean).join(": ");
      throw new PrimeNotRunningError(
        `sandbox ${id} is ${st.status}${why ? ` (${why})` : ""} instead of RUNNING`,
        {
          transport: "http",
          method: "POST",
          path: "/api/v1/sandbox/status:batchGet",
          status: st.status,
          errorType: st.errorType,
          cause: last ?? undefined,
        },
      );
    }
    const now = Date.now();
    if (st.status === "RUNNING") {
      if (!reachability) {
        // reachability: a fresh budget and backoff
        reachability = true;
        deadline = now + timing.budgetMs;
        i = 0;
      }
      try {
        const res = await client.exec(id, "echo 'sandbox ready'", {
          timeoutS: timing.probeTimeoutS,
          signal,
        });
        if (res.exitCode === 0) return { imageBuilt };
        last = new Error(`probe exited ${res.exitCode}: ${res.stderr.slice(-200)}`);
      } catch (e) {
        if (signal?.aborted) throw e;
        if (!isRetryableProbeError(e)) throw e;
        last = e;
      }
    } else if (st.status === "PENDING" && st.pendingImageBuildId) {
      if (!imageBuilt) {
        imageBuilt = true;
        log?.(`prime sandbox ${id}: building image on first use (build ${st.pendingImageBuildId})`);
      }
      buildDeadline ??= now + timing.imageBuildBudgetMs;
      if (now >= buildDeadline) {
        throw creationTimeout(
          id,
          `the image build did not finish within ${sec(timing.imageBuildBudgetMs)}s`,
        );
      }
      deadline = Math.max(deadline, now + timing.budgetMs);
      delay = Math.min(timing.imageBuildPollMs, buildDeadline - now);
      continue;
    }
    const after = Date.now();
    if (after >= deadline) {
      if (!reachability) {
        throw creationTimeout(id, `Sandbox did not reach RUNNING within ${sec(timing.budgetMs)}s`);
      }
      throw new PrimeCreationTimeoutError(
        `sandbox ${id} is RUNNING but its gateway did not answer within ${
          sec(timing.budgetMs)
        }s (GATEWAY_REACHABILITY_TIMEOUT); last error: ${
          last instanceof Error ? last.message : String(last)
        }`,
        {
          transport: "timeout",
          method: "POST",
          path: "exec",
          errorType: "GATEWAY_REACHABILITY_TIMEOUT",
          cause: last,
        },
      );
    }
    delay = Math.min(backoff(timing, i), Math.max(0, deadline - after));
  }
}

function sec(ms: number): number {
  return Math.round(ms / 1000);
}

function creationTimeout(id: string, message: string): PrimeCreationTimeoutError {
  return new PrimeCreationTimeoutError(`${message} (sandbox ${id})`, {
    transport: "timeout",
    method: "POST",
    path: "/api/v1/sandbox/status:batchGet",
    errorType: "SANDBOX_CREATION_TIMEOUT",
  });
}
