/**
 * What one process shares per Modal account (server, token pair, environment, image builder
 * version): the control-plane client with its auth token, and the app and image ids already
 * resolved, so runtimes of the same account ask Modal for each only once. A failed lookup
 * is forgotten, so the next runtime asks again.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { ModalApi } from "./api.ts";
import { resolveModalProfile } from "./profile.ts";
import type { ModalProfile } from "./profile.ts";

/** One account's client and its resolved app and image ids. */
export interface Account {
  api: ModalApi;
  apps: Map<string, Promise<string>>;
  images: Map<string, Promise<string>>;
}

const accounts = new Map<string, Account>();

function accountKey(p: ModalProfile): string {
  const secret = createHash("sha256").update(p.tokenSecret ?? "").digest("hex").slice(0, 16);
  return [p.serverUrl, p.tokenId ?? "", secret, p.environment, p.imageBuilderVersion].join("\n");
}

/** The shared state of the account `profile` names (made on first use). */
export function accountFor(profile: ModalProfile): Account {
  const key = accountKey(profile);
  let account = accounts.get(key);
  if (account === undefined) {
    account = { api: new ModalApi(profile), apps: new Map(), images: new Map() };
    accounts.set(key, account);
  }
  return account;
}

/** The promise cached under `key`, else `make()`'s, cached until it rejects. */
export function cached<T>(
  map: Map<string, Promise<T>>,
  key: string,
  make: () => Promise<T>,
): Promise<T> {
  let p = map.get(key);
  if (p === undefined) {
    p = make();
    map.set(key, p);
    p.catch(() => {
      if (map.get(key) === p) map.delete(key);
    });
  }
  return p;
}

/** The control-plane client this process shares for a profile (its auth token, its caches). */
export function sharedModalApi(profile: ModalProfile = resolveModalProfile()): ModalApi {
  return accountFor(profile).api;
}

/** Closes the cached connections of this process (for tests and clean shutdowns). */
export function closeModalConnections(): void {
  for (const a of accounts.values()) a.api.close();
  accounts.clear();
}
