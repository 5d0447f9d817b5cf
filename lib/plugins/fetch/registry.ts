/**
 * A client of the npm registry protocol (npm's own registry, mirrors, Verdaccio, JSR's
 * npm-compatible endpoint): the package document ("packument", abbreviated form
 * preferred), version selection by range or dist-tag as npm picks it, and tarball
 * download. The last good package document is cached, so a package whose tarball is
 * cached resolves offline.
 *
 * @module
 */
import { statSync } from "node:fs";
import { PluginError } from "../../../kit/errors.ts";
import { metadataPath, readJson } from "./cache.ts";
import { writeFileAtomic } from "../../../kit/util/write_atomic.ts";
import { RemoteNotFound } from "./fetch_errors.ts";
import { authorizationFor, registryFor, type RegistrySettings } from "./npmrc.ts";
import { type PackageSpec, packumentPath } from "./package_spec.ts";
import { maxSatisfying, parseRange, parseVersion, satisfies, sortVersions } from "./semver.ts";

/** The fields of one version of a package document that the resolver reads. */
export interface VersionManifest {
  name: string;
  version: string;
  dist: { tarball: string; integrity?: string; shasum?: string };
  deprecated?: string;
}

/** A package document as the registry serves it. */
export interface Packument {
  name: string;
  "dist-tags": Record<string, string>;
  versions: Record<string, VersionManifest>;
}

/** Where a package document came from. */
export interface PackumentResult {
  packument: Packument;
  /** The registry base URL asked. */
  registry: string;
  /** True when the registry was unreachable and the cached copy was used. */
  fromCache: boolean;
  /** Why the registry could not be used (when `fromCache`). */
  why?: string;
  /** When the cached copy was saved, ISO 8601 (when `fromCache`). */
  savedAt?: string;
}

const ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*";

/** Per-request timeouts of the registry client. */
const REGISTRY_TIMEOUT_MS = { metadata: 30_000, tarball: 120_000 } as const;

function errorText(err: unknown): string {
  if (err instanceof Error) {
    const cause = (err as { cause?: unknown }).cause;
    return cause instanceof Error ? `${err.message} (${cause.message})` : err.message;
  }
  return String(err);
}

function headersFor(settings: RegistrySettings, url: string, accept: string): HeadersInit {
  const auth = authorizationFor(settings, url);
  return auth ? { accept, authorization: auth } : { accept };
}

function validPackument(doc: unknown, name: string): doc is Packument {
  if (typeof doc !== "object" || doc === null) return false;
  const d = doc as Record<string, unknown>;
  return d.name === name && typeof d.versions === "object" && d.versions !== null &&
    typeof d["dist-tags"] === "object" && d["dist-tags"] !== null;
}

function describe(spec: PackageSpec): string {
  return spec.source === "jsr"
    ? `JSR package ${spec.displayName} (${spec.name})`
    : `npm package ${spec.name}`;
}

/**
 * Fetches a package document. A 404 is {@link RemoteNotFound}; when the registry cannot
 * be reached (network error or 5xx) the last cached copy is used, noted in `fromCache`.
 */
export async function fetchPackument(
  spec: PackageSpec,
  settings: RegistrySettings,
  cacheRoot: string,
): Promise<PackumentResult> {
  const registry = registryFor(settings, spec.name);
  const url = registry + packumentPath(spec.name);
  const cachePath = metadataPath(cacheRoot, registry, spec.name);
  const fallback = (why: string): PackumentResult => {
    const cached = readJson<Packument>(cachePath);
    if (cached && validPackument(cached, spec.name)) {
      const saved = statSync(cachePath, { throwIfNoEntry: false })?.mtime;
      return {
        packument: cached,
        registry,
        fromCache: true,
        why,
        ...(saved ? { savedAt: saved.toISOString().replace(/\.\d+Z$/, "Z") } : {}),
      };
    }
    throw new PluginError(
      "plugin_fetch_failed",
      `cannot fetch ${describe(spec)} from ${registry}: ${why}`,
      {
        hint: "Check the network or the registry setting (VF_NPM_REGISTRY, VF_JSR_REGISTRY, " +
          "NPM_CONFIG_REGISTRY, .npmrc); a plugin fetched once before loads offline from the cache",
      },
    );
  };
  let res: Response;
  try {
    res = await fetch(url, {
      headers: headersFor(settings, url, ACCEPT),
      signal: AbortSignal.timeout(REGISTRY_TIMEOUT_MS.metadata),
    });
  } catch (err) {
    return fallback(errorText(err));
  }
  if (res.status === 404 || res.status === 410) {
    await res.body?.cancel();
    throw new RemoteNotFound(`${describe(spec)} at ${registry}`);
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    throw new PluginError(
      "plugin_fetch_failed",
      `cannot fetch ${describe(spec)} from ${registry}: HTTP ${res.status} (not authorized)`,
      { hint: "Set a token for this registry in .npmrc (//host/path/:_authToken=${TOKEN})" },
    );
  }
  if (!res.ok) {
    await res.body?.cancel();
    return fallback(`HTTP ${res.status}`);
  }
  let doc: unknown;
  try {
    doc = await res.json();
  } catch (err) {
    return fallback(`invalid JSON (${errorText(err)})`);
  }
  if (!validPackument(doc, spec.name)) {
    throw new PluginError(
      "plugin_fetch_failed",
      `the registry ${registry} sent a malformed package document for ${describe(spec)}`,
      { hint: "Is the registry URL right? It must speak the npm registry protocol" },
    );
  }
  writeFileAtomic(cachePath, JSON.stringify(doc));
  return { packument: doc, registry, fromCache: false };
}

/**
 * Picks the version npm would (`npm-pick-manifest`): a dist-tag by name; no range or `*`
 * takes the `latest` tag whatever it points at, a prerelease included; another range takes
 * the `latest` tag when it satisfies the range, else the highest satisfying version
 * (prereleases only when the range asks). Null when nothing matches.
 */
export function pickVersion(packument: Packument, range: string): string | null {
  const tags = packument["dist-tags"];
  const versions = Object.keys(packument.versions);
  if (range !== "" && parseRange(range) === null) {
    const tagged = tags[range];
    return tagged && packument.versions[tagged] ? tagged : null;
  }
  const wanted = range === "" ? "*" : range;
  const latest = tags.latest;
  if (
    latest && packument.versions[latest] && parseVersion(latest) &&
    (wanted.trim() === "*" || satisfies(latest, wanted))
  ) {
    return latest;
  }
  return maxSatisfying(versions, wanted);
}

/** The published versions, ascending, for error messages. */
export function listVersions(packument: Packument): string[] {
  return sortVersions(Object.keys(packument.versions));
}

/** Downloads a tarball. 404 is {@link RemoteNotFound}; other failures are PluginErrors. */
export async function downloadTarball(
  url: string,
  settings: RegistrySettings,
  what: string,
): Promise<Uint8Array> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: headersFor(settings, url, "application/octet-stream, */*"),
      signal: AbortSignal.timeout(REGISTRY_TIMEOUT_MS.tarball),
    });
  } catch (err) {
    throw new PluginError(
      "plugin_fetch_failed",
      `cannot download ${what} from ${url}: ${errorText(err)}`,
      { hint: "Check the network or the registry setting" },
    );
  }
  if (res.status === 404 || res.status === 410) {
    await res.body?.cancel();
    throw new RemoteNotFound(`tarball of ${what} at ${url}`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw new PluginError(
      "plugin_fetch_failed",
      `cannot download ${what} from ${url}: HTTP ${res.status}`,
      { hint: "Check the network or the registry setting" },
    );
  }
  return new Uint8Array(await res.arrayBuffer());
}
