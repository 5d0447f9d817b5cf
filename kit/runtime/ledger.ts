/**
 * The sandbox ledger: one JSON file per live remote sandbox under
 * `<cache>/sandboxes/<provider>-<id>.json`. Creation is journaled before the request: a
 * remote runtime writes a *pending* entry (`<provider>-pending-<key>.json`: the sandbox's
 * name, labels and the creating process) before it asks the provider for a sandbox, replaces
 * it with the id entry the moment the id is known, and removes that only after a confirmed
 * stop. So whatever a crash leaves behind — even a `kill -9` while the create request is in
 * flight — can be listed and garbage-collected (`vf sandboxes list|gc`): `gc` looks pending
 * entries up by name in the provider's own listing.
 *
 * Each entry is its own file written atomically (temp file + rename), so concurrent
 * processes never need a shared lock.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { userCacheSubdir } from "./cache_dir.ts";
import { processAlive } from "./workdirs.ts";
import { redact } from "../secrets.ts";

/** One live (or not yet confirmed stopped) remote sandbox. */
export interface LedgerEntry {
  /** Runtime type that created it (`prime`, `modal`). */
  provider: string;
  /** The provider's sandbox id. */
  id: string;
  /** ISO-8601 time the id became known. */
  created_at: string;
  /** The run directory (or run name) that owns it, if any. */
  run?: string | null;
  /** The sandbox name given to the provider, if any. */
  name?: string | null;
  /** Non-secret settings needed to reach the provider again (e.g. a base URL). Never keys. */
  config?: Record<string, unknown>;
  /**
   * `pending`: the create request was (or is being) sent and no id is known yet (`id` is
   * empty); `created` (the default): the provider returned `id`.
   */
  state?: "pending" | "created";
  /** Pending entries: the key of the entry file. */
  key?: string;
  /** Pending entries: the process that sends the create request, and its host. */
  pid?: number;
  host?: string;
  /** Labels given to the provider with the create request, if any. */
  labels?: string[];
}

/** What {@link recordPending} needs: who creates which named sandbox, and how to reach it. */
export interface PendingSandbox {
  provider: string;
  /** The name the sandbox is created with (how `gc` finds it again). */
  name: string;
  run?: string | null;
  labels?: string[];
  config?: Record<string, unknown>;
}

let ledgerOverride: string | null = null;

/**
 * Keeps this process's ledger in `dir` instead of the user cache (a sharded run keeps its
 * own in `<shard dir>/sandboxes`, so a restarted shard finds what its predecessor leaked);
 * `null` goes back to the user cache.
 */
export function useLedgerDir(dir: string | null): void {
  ledgerOverride = dir;
}

/** The ledger directory (created on demand). */
export function ledgerDir(): string {
  if (ledgerOverride === null) return userCacheSubdir("sandboxes");
  mkdirSync(ledgerOverride, { recursive: true });
  return ledgerOverride;
}

function safePart(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, "_");
}

function entryPath(provider: string, id: string): string {
  return join(ledgerDir(), `${safePart(provider)}-${safePart(id)}.json`);
}

function pendingPath(provider: string, key: string): string {
  return join(ledgerDir(), `${safePart(provider)}-pending-${safePart(key)}.json`);
}

function writeEntry(path: string, entry: LedgerEntry): void {
  const tmp = `${path}.${randomUUID()}.tmp`;
  try {
    writeFileSync(tmp, redact(JSON.stringify(entry, null, 2)) + "\n", { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Records a live sandbox (overwrites an entry with the same provider and id). */
export function recordSandbox(entry: LedgerEntry): void {
  writeEntry(entryPath(entry.provider, entry.id), {
    provider: entry.provider,
    id: entry.id,
    created_at: entry.created_at,
    run: entry.run ?? null,
    name: entry.name ?? null,
    config: entry.config ?? {},
    ...(entry.labels?.length ? { labels: entry.labels } : {}),
  });
}

/**
 * Journals a sandbox creation before its request is sent; returns the entry's key (pass it
 * to {@link removePending} once the id is recorded, or once the provider refused the create).
 * Throws when the ledger cannot be written: then no sandbox may be created.
 */
export function recordPending(sandbox: PendingSandbox): string {
  const key = randomUUID().replaceAll("-", "");
  writeEntry(pendingPath(sandbox.provider, key), {
    provider: sandbox.provider,
    id: "",
    created_at: new Date().toISOString(),
    run: sandbox.run ?? null,
    name: sandbox.name,
    config: sandbox.config ?? {},
    state: "pending",
    key,
    pid: process.pid,
    host: hostname(),
    ...(sandbox.labels?.length ? { labels: sandbox.labels } : {}),
  });
  return key;
}

/** Removes a pending entry. Missing entries are fine. */
export function removePending(provider: string, key: string): void {
  rmSync(pendingPath(provider, key), { force: true });
}

/** True when the process that wrote a pending entry still runs (on this host). */
export function pendingOwnerAlive(entry: LedgerEntry): boolean {
  if (entry.state !== "pending" || entry.pid === undefined) return false;
  if (entry.host !== undefined && entry.host !== hostname()) return true; // cannot tell: keep
  return processAlive(entry.pid);
}

/** Removes a sandbox's entry (after a confirmed stop). Missing entries are fine. */
export function removeSandbox(provider: string, id: string): void {
  rmSync(entryPath(provider, id), { force: true });
}

/** Every entry in the ledger, oldest first. Unreadable files are skipped. */
export function listSandboxes(): LedgerEntry[] {
  const dir = ledgerDir();
  const out: LedgerEntry[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".json")) continue;
    try {
      const data = JSON.parse(readFileSync(join(dir, name), "utf8")) as Partial<LedgerEntry>;
      if (typeof data.provider !== "string" || typeof data.id !== "string") continue;
      const pending = data.state === "pending" && typeof data.key === "string";
      if (!pending && data.id === "") continue;
      out.push({
        provider: data.provider,
        id: data.id,
        created_at: typeof data.created_at === "string" ? data.created_at : "",
        run: typeof data.run === "string" ? data.run : null,
        name: typeof data.name === "string" ? data.name : null,
        config: data.config && typeof data.config === "object" ? data.config : {},
        ...(pending
          ? {
            state: "pending" as const,
            key: data.key,
            ...(typeof data.pid === "number" ? { pid: data.pid } : {}),
            ...(typeof data.host === "string" ? { host: data.host } : {}),
          }
          : {}),
        ...(Array.isArray(data.labels) && data.labels.every((l) => typeof l === "string")
          ? { labels: data.labels }
          : {}),
      });
    } catch {
      // a half-written or foreign file: ignore
    }
  }
  out.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return out;
}
