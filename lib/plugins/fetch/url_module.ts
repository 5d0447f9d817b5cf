/**
 * Fetching a plugin from an `http(s):` URL: one self-contained module, cached by its
 * sha512 under an index per URL, served from the cache when the server is unreachable
 * (or answers 5xx), and checked against `vf.lock` when locked.
 *
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { errorMessage, PluginError } from "../../../kit/errors.ts";
import { moduleFilePath, pluginCacheRoot, readJson, urlIndexPath } from "./cache.ts";
import { writeFileAtomic } from "../../../kit/util/write_atomic.ts";
import { importTarget } from "./entry.ts";
import {
  type FetchedPlugin,
  type FetchOptions,
  hexOf,
  integrityMismatch,
  modeOf,
} from "./fetch_options.ts";
import { RemoteNotFound } from "./fetch_errors.ts";
import { checkIntegrity, computeIntegrity, integrityConflict, sha512Hex } from "./integrity.ts";

interface UrlIndex {
  url: string;
  integrity: string;
  file: string;
}

function moduleFileName(url: string, contentType: string | null): string {
  const last = basename(decodeURIComponent(new URL(url).pathname)) || "module";
  const safe = last.replace(/[^A-Za-z0-9._-]/g, "_").slice(-100) || "module";
  if (/\.(m?js|m?ts|tsx|jsx)$/.test(safe)) return safe;
  const ts = contentType !== null && /typescript/i.test(contentType);
  return `${safe}${ts ? ".ts" : ".js"}`;
}

function cachedModule(
  root: string,
  index: UrlIndex | undefined,
  integrity?: string,
): string | null {
  if (!index || (integrity && integrityConflict(index.integrity, integrity))) return null;
  const hex = hexOf(index.integrity);
  if (!hex) return null;
  const file = moduleFilePath(root, hex, index.file);
  if (!existsSync(file)) return null;
  return sha512Hex(new Uint8Array(readFileSync(file))) === hex ? file : null;
}

/** The cached file of a URL when it exists but fails its hash, else null. */
function corruptModule(root: string, index: UrlIndex | undefined): string | null {
  const hex = index ? hexOf(index.integrity) : null;
  if (!index || !hex) return null;
  const file = moduleFilePath(root, hex, index.file);
  return existsSync(file) && cachedModule(root, index) === null ? file : null;
}

/** Fetches (or finds in the cache) the module at `url`. */
export async function fetchUrl(url: string, options: FetchOptions): Promise<FetchedPlugin> {
  const root = pluginCacheRoot(options.cacheDir);
  const locked = options.lock?.lookup(url);
  const indexPath = urlIndexPath(root, url);
  const index = readJson<UrlIndex>(indexPath);
  const done = (file: string, integrity: string, offline: boolean): FetchedPlugin => {
    options.lock?.record(url, { resolved: url, integrity });
    return {
      specifier: url,
      resolved: url,
      integrity,
      file,
      importTarget: importTarget(file, modeOf(options)),
      offline,
      singleFile: true,
    };
  };
  if (locked) {
    const file = cachedModule(root, index, locked.integrity);
    if (file) return done(file, index!.integrity, true);
  }
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { accept: "text/javascript, application/javascript, application/typescript, */*" },
      signal: AbortSignal.timeout(60_000),
    });
  } catch (err) {
    const file = cachedModule(root, index, locked?.integrity);
    if (file) {
      options.log?.(`${url}: unreachable, using the cached copy`);
      return done(file, index!.integrity, true);
    }
    const stale = corruptModule(root, index);
    throw new PluginError(
      "plugin_fetch_failed",
      `cannot fetch ${url}: ${errorMessage(err)}` +
        (stale ? `; the cached copy ${stale} no longer matches its hash` : ""),
      {
        hint: stale
          ? `Remove it (rm ${stale}) and run again with the server reachable`
          : "Check the network; a plugin fetched once before loads offline from the cache",
      },
    );
  }
  if (res.status === 404 || res.status === 410) {
    await res.body?.cancel();
    throw new RemoteNotFound(url);
  }
  if (!res.ok) {
    await res.body?.cancel();
    const file = res.status >= 500 ? cachedModule(root, index, locked?.integrity) : null;
    if (file) {
      options.log?.(`${url}: HTTP ${res.status}, using the cached copy`);
      return done(file, index!.integrity, true);
    }
    throw new PluginError("plugin_fetch_failed", `cannot fetch ${url}: HTTP ${res.status}`, {
      hint: "The URL must serve the plugin module itself (one self-contained ESM file)",
    });
  }
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (locked) {
    const bad = checkIntegrity(bytes, locked.integrity);
    if (bad) throw integrityMismatch(url, locked.integrity, bad, true);
  }
  const hex = sha512Hex(bytes);
  const name = moduleFileName(url, res.headers.get("content-type"));
  const file = moduleFilePath(root, hex, name);
  if (!existsSync(file) || sha512Hex(new Uint8Array(readFileSync(file))) !== hex) {
    writeFileAtomic(file, bytes); // a rename: a process reading the old file keeps its copy
  }
  const integrity = computeIntegrity(bytes);
  writeFileAtomic(indexPath, JSON.stringify({ url, integrity, file: name } satisfies UrlIndex));
  return done(file, integrity, false);
}
