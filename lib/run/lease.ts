/**
 * The lease of a run directory, so that two processes never run one shard at once (a
 * scheduler that starts an index twice, a zombie pod): `lease.json` names its owner
 * (host, pid) and a heartbeat the owner renews. A second process is refused while the
 * lease is live; a lease is stale when its heartbeat is older than the stale time, or when
 * its owner ran on this host and is gone (a `kill -9`), and a stale lease is taken over.
 *
 * Creation is `O_EXCL`; a takeover first creates `lease.json.takeover-<stale token>` with
 * `O_EXCL`, so of two processes taking over the same stale lease exactly one wins. The owner
 * checks its token at every heartbeat: a lease taken from it is reported (`onLost`).
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { VerifiersError } from "../../kit/errors.ts";
import { processAlive } from "../../kit/runtime/workdirs.ts";
import { writeFileAtomic } from "../../kit/util/write_atomic.ts";

/** The exit code of a launch refused by a live lease (retryable: EX_TEMPFAIL). */
export const LEASE_HELD_EXIT = 75;

/** The tokens of the leases this process holds. */
const HELD_HERE = new Set<string>();

/** What `lease.json` holds. */
export interface LeaseRecord {
  owner: string;
  host: string;
  pid: number;
  token: string;
  started: string;
  heartbeat: string;
}

/** A held lease. */
export interface Lease {
  readonly path: string;
  readonly record: LeaseRecord;
  /** Stops the heartbeat and removes the lease if it is still ours. Idempotent. */
  release(): void;
}

/** Options of {@link acquireLease}. */
export interface LeaseOptions {
  /** A heartbeat older than this makes the lease stale. @default 60000 */
  staleMs?: number;
  /** How often the owner renews the heartbeat. @default 10000 */
  heartbeatMs?: number;
  /** Called once when the lease was taken over by another process. */
  onLost?: (by: string) => void;
}

function leaseHeld(dir: string, held: LeaseRecord | null): VerifiersError {
  const who = held ? `${held.owner} (heartbeat ${held.heartbeat})` : "another process";
  return new VerifiersError(
    "shard_leased",
    `Cannot run ${dir}: it is leased by ${who}`,
    {
      hint: "another process runs this shard now; it is taken over once that process is gone " +
        "or its heartbeat is stale",
      exitCode: LEASE_HELD_EXIT,
    },
  );
}

function readRecord(path: string): LeaseRecord | null {
  try {
    const v = JSON.parse(readFileSync(path, "utf8"));
    return typeof v?.token === "string" && typeof v.heartbeat === "string" ? v : null;
  } catch {
    return null;
  }
}

function isStale(path: string, held: LeaseRecord | null, staleMs: number): boolean {
  if (held === null) {
    // unreadable (a torn create): stale once old enough
    try {
      return Date.now() - statSync(path).mtimeMs > staleMs;
    } catch {
      return true;
    }
  }
  if (held.host === hostname()) {
    // our own pid under a token we do not hold: an earlier incarnation (a container
    // restarted in its pod gets the same host name and often the same pid)
    if (held.pid === process.pid) return !HELD_HERE.has(held.token);
    if (!processAlive(held.pid)) return true;
  }
  const beat = Date.parse(held.heartbeat);
  return !Number.isFinite(beat) || Date.now() - beat > staleMs;
}

function createExclusive(path: string, text: string): boolean {
  try {
    writeFileSync(path, text, { flag: "wx" });
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === "EEXIST") return false;
    throw err;
  }
}

/** Takes the lease of `dir` (created if absent) or throws the refusal (exit 75). */
export function acquireLease(dir: string, options: LeaseOptions = {}): Lease {
  const staleMs = options.staleMs ?? 60_000;
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  mkdirSync(dir, { recursive: true });
  const path = join(dir, "lease.json");
  const now = new Date().toISOString();
  const record: LeaseRecord = {
    owner: `${hostname()}:${process.pid}`,
    host: hostname(),
    pid: process.pid,
    token: randomUUID(),
    started: now,
    heartbeat: now,
  };
  const text = () => JSON.stringify(record) + "\n";
  if (!createExclusive(path, text())) {
    const held = readRecord(path);
    if (!isStale(path, held, staleMs)) throw leaseHeld(dir, held);
    const staleToken = held?.token ?? `unreadable-${statSync(path).mtimeMs}`;
    if (!createExclusive(`${path}.takeover-${staleToken}`, record.token)) {
      throw leaseHeld(dir, readRecord(path));
    }
    writeFileAtomic(path, text());
  }
  HELD_HERE.add(record.token);
  let lost = false;
  const timer = setInterval(() => {
    if (lost) return;
    const current = readRecord(path);
    if (current?.token !== record.token) {
      lost = true;
      options.onLost?.(current?.owner ?? "another process");
      return;
    }
    record.heartbeat = new Date().toISOString();
    try {
      writeFileAtomic(path, text());
    } catch {
      // a missed beat; the next one tries again
    }
  }, heartbeatMs);
  (timer as { unref?: () => void }).unref?.();
  let released = false;
  return {
    path,
    record,
    release() {
      if (released) return;
      released = true;
      clearInterval(timer);
      HELD_HERE.delete(record.token);
      if (readRecord(path)?.token === record.token) rmSync(path, { force: true });
      for (const name of safeList(dir)) {
        if (name.startsWith("lease.json.takeover-")) rmSync(join(dir, name), { force: true });
      }
    },
  };
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** The lease record of `dir` and whether it is live now (null: no lease). */
export function leaseOf(
  dir: string,
  staleMs = 60_000,
): { record: LeaseRecord; live: boolean } | null {
  const path = join(dir, "lease.json");
  const record = readRecord(path);
  if (record === null) return null;
  return { record, live: !isStale(path, record, staleMs) };
}

/** Throws the refusal (exit 75) when `dir` has a live lease (e.g. before deleting it). */
export function refuseIfLeased(dir: string, staleMs = 60_000): void {
  const held = leaseOf(dir, staleMs);
  if (held?.live) throw leaseHeld(dir, held.record);
}
