/**
 * Sandbox creation limiters shared by every process of the user: a leaky bucket whose
 * state (the next free slot, epoch milliseconds) lives in `<cache>/limiter/<provider>.json`,
 * guarded by an exclusive lock file (`O_EXCL` create, with stale-lock recovery). Each
 * creation reserves `slot = max(now, next)` and stores `slot + interval`, then sleeps until
 * its slot. Works the same on Deno, Bun and Node (plain `node:fs`).
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { SandboxError } from "../errors.ts";
import { userCacheSubdir } from "./cache_dir.ts";
import { sleep } from "../util/sleep.ts";

/** A creation rate; the tighter of the two applies when both are set. None or ≤ 0 = no limit. */
export interface CreateRateLimit {
  perSecond?: number | null;
  perMinute?: number | null;
}

/** A wait longer than this for a creation slot fails instead of queueing (as verifiers). */
export const MAX_CREATE_WAIT_MS = 300_000;
/** A lock file older than this is considered left behind by a dead process. */
const STALE_LOCK_MS = 10_000;
/** How long to wait for the lock before giving up (the critical section is tiny). */
const LOCK_TIMEOUT_MS = 30_000;

/** Milliseconds between two creations for a limit, or null when unlimited. */
export function createIntervalMs(limit: CreateRateLimit): number | null {
  const intervals: number[] = [];
  if (limit.perSecond != null && limit.perSecond > 0) intervals.push(1000 / limit.perSecond);
  if (limit.perMinute != null && limit.perMinute > 0) intervals.push(60_000 / limit.perMinute);
  return intervals.length === 0 ? null : Math.max(...intervals);
}

function safeName(provider: string): string {
  return provider.replace(/[^A-Za-z0-9._-]/g, "_");
}

async function withLock<T>(lockPath: string, fn: () => T, signal?: AbortSignal): Promise<T> {
  const token = `${randomUUID()}\n`;
  const started = Date.now();
  let delay = 2;
  for (;;) {
    let fd: number | null = null;
    try {
      fd = openSync(lockPath, "wx", 0o600);
    } catch (e) {
      if ((e as { code?: string }).code !== "EEXIST") throw e;
    }
    if (fd !== null) {
      try {
        writeSync(fd, token);
      } finally {
        closeSync(fd);
      }
      try {
        return fn();
      } finally {
        try {
          if (readFileSync(lockPath, "utf8") === token) rmSync(lockPath, { force: true });
        } catch {
          // already gone
        }
      }
    }
    breakStaleLock(lockPath);
    if (Date.now() - started > LOCK_TIMEOUT_MS) {
      throw new SandboxError(`Cannot take the creation limiter lock "${lockPath}"`, {
        hint: "Another process holds it; remove the file if no verifiers-ts process is running",
      });
    }
    await sleep(delay, signal);
    delay = Math.min(delay * 2, 50);
  }
}

/** Removes a lock file whose owner died, without removing a lock taken in the meantime. */
function breakStaleLock(lockPath: string): void {
  let content: string;
  try {
    if (Date.now() - statSync(lockPath).mtimeMs < STALE_LOCK_MS) return;
    content = readFileSync(lockPath, "utf8");
  } catch {
    return;
  }
  const aside = `${lockPath}.${randomUUID()}.stale`;
  try {
    renameSync(lockPath, aside);
  } catch {
    return;
  }
  try {
    // We moved someone else's fresh lock aside: put it back (link fails if a new one exists).
    if (readFileSync(aside, "utf8") !== content) linkSync(aside, lockPath);
  } catch {
    // best effort
  } finally {
    rmSync(aside, { force: true });
  }
}

/**
 * Reserves the next creation slot for `provider` (epoch ms) without waiting for it. Shared
 * by every process of the user through the state file. Exposed for tests; use
 * {@link acquireCreateSlot}.
 */
export async function reserveCreateSlot(
  provider: string,
  intervalMs: number,
  signal?: AbortSignal,
): Promise<number> {
  const dir = userCacheSubdir("limiter");
  const statePath = join(dir, `${safeName(provider)}.json`);
  return await withLock(join(dir, `${safeName(provider)}.lock`), () => {
    let next = 0;
    try {
      const data = JSON.parse(readFileSync(statePath, "utf8")) as { next_ms?: unknown };
      if (typeof data.next_ms === "number" && Number.isFinite(data.next_ms)) next = data.next_ms;
    } catch {
      // first use or a damaged file: start fresh
    }
    const now = Date.now();
    const slot = Math.max(now, next);
    if (slot - now > MAX_CREATE_WAIT_MS) {
      throw new SandboxError(
        `${provider} sandbox creation is rate limited: the next slot is ${
          Math.round((slot - now) / 1000)
        }s away (limit ${MAX_CREATE_WAIT_MS / 1000}s)`,
        { hint: "Lower the run's concurrency or raise the runtime's creation rate limit" },
      );
    }
    const tmp = `${statePath}.${randomUUID()}.tmp`;
    writeFileSync(tmp, JSON.stringify({ next_ms: slot + intervalMs }) + "\n");
    renameSync(tmp, statePath);
    return slot;
  }, signal);
}

/**
 * Waits for a creation slot of `provider` under `limit`, shared by all processes of the
 * user. Resolves at once when the limit is unset. Throws a SandboxError when the backlog is
 * over {@link MAX_CREATE_WAIT_MS}, and the signal's reason when aborted.
 */
export async function acquireCreateSlot(
  provider: string,
  limit: CreateRateLimit,
  signal?: AbortSignal,
): Promise<void> {
  const interval = createIntervalMs(limit);
  if (interval === null) return;
  if (signal?.aborted) throw signal.reason;
  const slot = await reserveCreateSlot(provider, interval, signal);
  const wait = slot - Date.now();
  if (wait > 0) await sleep(wait, signal);
}
