/**
 * The sandbox ledger: one JSON file per live remote sandbox under
 * `<cache>/sandboxes/<provider>-<id>.json`. A remote runtime records a sandbox the moment
 * its provider id is known and removes it only after a confirmed stop, so whatever a crash
 * leaves behind can be listed and garbage-collected (`vf sandboxes list|gc`).
 *
 * Each entry is its own file written atomically (temp file + rename), so concurrent
 * processes never need a shared lock.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { userCacheSubdir } from "./cache_dir.ts";

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
}

/** The ledger directory (created on demand). */
export function ledgerDir(): string {
  return userCacheSubdir("sandboxes");
}

function safePart(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, "_");
}

function entryPath(provider: string, id: string): string {
  return join(ledgerDir(), `${safePart(provider)}-${safePart(id)}.json`);
}

/** Records a live sandbox (overwrites an entry with the same provider and id). */
export function recordSandbox(entry: LedgerEntry): void {
  const path = entryPath(entry.provider, entry.id);
  const tmp = `${path}.${randomUUID()}.tmp`;
  const clean: LedgerEntry = {
    provider: entry.provider,
    id: entry.id,
    created_at: entry.created_at,
    run: entry.run ?? null,
    name: entry.name ?? null,
    config: entry.config ?? {},
  };
  writeFileSync(tmp, JSON.stringify(clean, null, 2) + "\n", { mode: 0o600 });
  renameSync(tmp, path);
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
      out.push({
        provider: data.provider,
        id: data.id,
        created_at: typeof data.created_at === "string" ? data.created_at : "",
        run: typeof data.run === "string" ? data.run : null,
        name: typeof data.name === "string" ? data.name : null,
        config: data.config && typeof data.config === "object" ? data.config : {},
      });
    } catch {
      // a half-written or foreign file: ignore
    }
  }
  out.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  return out;
}
