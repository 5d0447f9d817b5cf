/**
 * Config pieces shared by the remote runtimes (Prime, Modal): the hard lifetime `timeout`
 * (60..86400 s, default 86400) and the unit conversions their APIs need, with the exact
 * rounding rules of `verifiers/v1/runtimes/prime.py` and `modal.py` at a60a606.
 *
 * @module
 */
import { z } from "zod";

/** Smallest allowed sandbox lifetime, seconds. */
const MIN_REMOTE_TIMEOUT_S = 60;
/** Largest allowed (and default) sandbox lifetime, seconds. */
const MAX_REMOTE_TIMEOUT_S = 86_400;

/** The message of an out-of-range lifetime (as verifiers words it). */
const TIMEOUT_RANGE_MESSAGE = "timeout must be between 60 and 86400 seconds";

/** The `timeout` key of a remote runtime: hard sandbox lifetime in seconds. */
export const remoteTimeoutSchema: z.ZodDefault<z.ZodNumber> = z.number().refine(
  isValidRemoteTimeout,
  {
    message: TIMEOUT_RANGE_MESSAGE,
  },
).default(MAX_REMOTE_TIMEOUT_S).describe(
  "Hard sandbox lifetime in seconds (60..86400); harness timeouts are capped to it",
);

/** The `image` key shared by remote runtimes. */
export const remoteImageSchema: z.ZodDefault<z.ZodString> = z.string().min(1).default(
  "python:3.11-slim",
).describe(
  "Container image of the sandbox",
);

/** The `workdir` key shared by remote runtimes (absolute). */
export const remoteWorkdirSchema: z.ZodDefault<z.ZodString> = z.string().refine(
  (p) => p.startsWith("/"),
  {
    message: "workdir must be an absolute path",
  },
).default("/app").describe("Working directory inside the sandbox (absolute)");

/** True when `t` is an allowed lifetime. */
function isValidRemoteTimeout(t: number): boolean {
  return Number.isFinite(t) && t >= MIN_REMOTE_TIMEOUT_S && t <= MAX_REMOTE_TIMEOUT_S;
}

/** Seconds to whole minutes rounded up (Prime `timeout_minutes`): 121 s -> 3. */
export function secondsToMinutesCeil(seconds: number): number {
  return Math.ceil(seconds / 60);
}

/** Prime's idle timeout in minutes: `max(1, ceil(s/60))`: 61 s -> 2, 30 s -> 1. */
export function idleSecondsToMinutes(seconds: number): number {
  return Math.max(1, Math.ceil(seconds / 60));
}

/** Seconds truncated toward zero (Modal `timeout_secs`, the harness cap): 121.9 -> 121. */
export function truncSeconds(seconds: number): number {
  return Math.trunc(seconds);
}

/** GB to MiB truncated (Modal `memory_mb`): 2.0 -> 2048. */
export function gbToMib(gb: number): number {
  return Math.trunc(gb * 1024);
}

/** CPU cores to milli-CPU truncated (Modal `milli_cpu`): 1.0 -> 1000. */
export function coresToMilliCpu(cores: number): number {
  return Math.trunc(cores * 1000);
}
