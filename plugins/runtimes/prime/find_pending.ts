/**
 * Resolving a pending ledger entry (a create request whose reply never arrived) against
 * Prime's own listing, `GET /api/v1/sandbox` with `is_active=true` (and the entry's labels),
 * page by page as the Prime SDK's `list()` asks for it (`prime_sandboxes/sandbox.py` at
 * 66fb4b70). The sandboxes carrying the entry's name are the ones its create made.
 *
 * @module
 */
import type { LedgerEntry } from "../../../kit/mod.ts";
import { loadPrimeSettings } from "./settings.ts";

/** Sandboxes asked for per page (the SDK's default is 50). */
const PER_PAGE = 100;
/** Pages read at most (10,000 active sandboxes). */
const MAX_PAGES = 100;

/** The ids of the active Prime sandboxes named as the pending entry's sandbox. */
export async function findPendingPrimeSandboxes(entry: LedgerEntry): Promise<string[]> {
  if (!entry.name) return [];
  const baseUrl = typeof entry.config?.base_url === "string" ? entry.config.base_url : null;
  const settings = loadPrimeSettings({ baseUrl });
  if (!settings.apiKey) throw new Error("no Prime API key (set PRIME_API_KEY)");
  const ids: string[] = [];
  for (let page = 1; page <= MAX_PAGES; page++) {
    const query = new URLSearchParams({
      page: String(page),
      per_page: String(PER_PAGE),
      is_active: "true",
    });
    if (settings.teamId) query.set("team_id", settings.teamId);
    for (const label of entry.labels ?? []) query.append("labels", label);
    const res = await fetch(`${settings.baseUrl}/api/v1/sandbox?${query}`, {
      headers: { authorization: `Bearer ${settings.apiKey}`, accept: "application/json" },
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) {
      throw new Error(`listing sandboxes failed: HTTP ${res.status}: ${text.slice(0, 200)}`);
    }
    const body = JSON.parse(text) as {
      sandboxes?: { id?: unknown; name?: unknown }[];
      hasNext?: unknown;
    };
    for (const sb of body.sandboxes ?? []) {
      if (sb.name === entry.name && typeof sb.id === "string") ids.push(sb.id);
    }
    if (body.hasNext !== true) break;
  }
  return ids;
}
