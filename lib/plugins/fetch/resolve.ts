/**
 * The fetch-and-cache resolver for plugin specifiers a host cannot import natively
 * (Bun, single-file binaries, and `deno run` as a fallback): `http(s):` URLs (one
 * self-contained module), `npm:` packages (registry metadata, range resolution,
 * tarball download, `dist.integrity` verification, extraction, the plugin entry) and
 * `jsr:` packages through JSR's npm-compatible registry. Everything lands in the
 * content-addressed cache and is imported from there (a file URL, or a `data:` URL
 * where the host only accepts that). A `vf.lock` pins versions and integrity.
 *
 * @module
 */
import { join } from "node:path";
import { errorMessage, PluginError } from "../../../kit/errors.ts";
import type { LockEntry } from "../lock.ts";
import {
  type CorruptEntry,
  findInstalledPackage,
  installPackage,
  pluginCacheRoot,
  readCachedTarball,
  readJson,
  tarballCorrupt,
  tarballPath,
} from "./cache.ts";
import { entryProblem, importTarget, packageEntry } from "./entry.ts";
import {
  checkIntegrity,
  computeIntegrity,
  integrityConflict,
  sha512Hex,
  shasumToIntegrity,
  strongestHash,
} from "./integrity.ts";
import { type RegistrySettings, registrySettings } from "./npmrc.ts";
import { isSemverRange, type PackageSpec, parsePackageSpec } from "./package_spec.ts";
import { downloadTarball, fetchPackument, listVersions, pickVersion } from "./registry.ts";
import { satisfies } from "./semver.ts";
import {
  type FetchedPlugin,
  type FetchOptions,
  hexOf,
  integrityMismatch,
  modeOf,
  noteOf,
} from "./fetch_options.ts";
import { fetchUrl } from "./url_module.ts";

export type { FetchedPlugin, FetchOptions } from "./fetch_options.ts";

/** The registry settings these options give. */
function fetchSettings(options: FetchOptions): RegistrySettings {
  return registrySettings({
    cwd: options.cwd,
    registry: options.registry,
    jsrRegistry: options.jsrRegistry,
    env: options.env,
  });
}

/**
 * True when the user pointed verifiers-ts at a registry of their own for this specifier
 * (an explicit option, `VF_*`, npm's registry setting or `.npmrc`): then the resolver is
 * used even where the host could import the specifier natively.
 */
export function registryOverridden(specifier: string, options: FetchOptions): boolean {
  const s = fetchSettings(options);
  if (specifier.startsWith("jsr:")) return s.jsrOverridden;
  if (specifier.startsWith("npm:")) return s.npmOverridden;
  return false;
}

function resolvedName(spec: PackageSpec, version: string): string {
  return `${spec.source}:${spec.displayName}@${version}`;
}

async function fetchPackage(
  specifier: string,
  spec: PackageSpec,
  options: FetchOptions,
): Promise<FetchedPlugin> {
  const root = pluginCacheRoot(options.cacheDir);
  const settings = fetchSettings(options);
  const locked = options.lock?.lookup(specifier);
  const what = (v: string) => `${specifier} (${spec.name}@${v})`;
  if (locked) {
    const v = locked.version ?? "";
    if (
      locked.resolved !== resolvedName(spec, v) ||
      (isSemverRange(spec.range) && !satisfies(v, spec.range || "*"))
    ) {
      throw new PluginError(
        "plugin_lock_mismatch",
        `vf.lock pins "${specifier}" to ${locked.resolved}, which does not match the specifier`,
        { hint: "Delete the entry and run with --lock to resolve it again" },
      );
    }
  }
  const finish = (dir: string, version: string, integrity: string, offline: boolean) => {
    const file = packageEntry(dir, spec.subpath);
    if (!file) {
      const problem = entryProblem(dir, spec.subpath);
      throw new PluginError(
        "plugin_package_invalid",
        `${what(version)} is broken: ` +
          (problem ?? `it has no plugin entry${spec.subpath ? ` for ${spec.subpath}` : ""}`),
        {
          hint: problem?.includes("not in the package")
            ? "Build the package before publishing it (npm pack lists what it holds)"
            : 'Publish the bundled plugin as the "./plugin" export or the "." export (see docs/plugins.md)',
        },
      );
    }
    const entry: LockEntry = { resolved: resolvedName(spec, version), version, integrity };
    options.lock?.record(specifier, entry);
    return {
      specifier,
      resolved: entry.resolved,
      version,
      integrity,
      file,
      importTarget: importTarget(file, modeOf(options)),
      offline,
      singleFile: false,
    };
  };
  const note = noteOf(options);
  const corrupt: CorruptEntry[] = [];
  /** A verified extracted tree of `hex`, re-extracted from a verified cached tarball if needed. */
  const fromCache = (hex: string): string | undefined => {
    const found = findInstalledPackage(root, hex);
    if (found.dir) return found.dir;
    for (const c of found.corrupt) {
      if (!corrupt.some((k) => k.dir === c.dir)) corrupt.push(c);
    }
    const tgz = readCachedTarball(root, hex);
    if (!tgz) return undefined;
    const dir = installPackage(root, hex, tgz);
    for (const c of found.corrupt) {
      note(
        `cache entry ${c.dir} failed verification (${c.problem}); re-extracted ` +
          `${spec.displayName} from its verified tarball into ${dir}`,
      );
    }
    return dir;
  };
  // a locked sha512 that is already cached needs no network at all, when the cached
  // package is the one the lock names (an integrity edited to another package's is not)
  const lockedHex = locked ? hexOf(locked.integrity) : null;
  if (locked && lockedHex) {
    const dir = fromCache(lockedHex);
    if (dir && isPackage(dir, spec.name, locked.version!)) {
      return finish(dir, locked.version!, locked.integrity, true);
    }
  }
  /** A fetch failure, naming the corrupt cache entries that kept it from working offline. */
  const namingCorrupt = (err: unknown, hexes: (string | null)[]): unknown => {
    const bad = [
      ...corrupt.map((c) => `${c.dir} (${c.problem})`),
      ...[...new Set(hexes)].filter((h): h is string => !!h && tarballCorrupt(root, h))
        .map((h) => `${tarballPath(root, h)} (its bytes no longer match its hash)`),
    ];
    if (!(err instanceof PluginError) || bad.length === 0) return err;
    return new PluginError(
      err.code,
      `${err.message}; the cached copy cannot be used: ${bad.join(", ")}`,
      {
        hint: `Remove the corrupt cache entries (rm -rf ${
          bad.map((b) => b.replace(/ \(.*$/, "")).join(" ")
        }) and run again with the registry reachable`,
        cause: err,
      },
    );
  };
  let fetched;
  try {
    fetched = await fetchPackument(spec, settings, root);
  } catch (err) {
    throw namingCorrupt(err, [lockedHex]);
  }
  const { packument, registry } = fetched;
  const version = locked?.version ?? pickVersion(packument, spec.range);
  if (fetched.fromCache) {
    note(
      `${registry} is unreachable (${fetched.why}); using the cached metadata of ` +
        `${spec.displayName}${fetched.savedAt ? ` saved ${fetched.savedAt}` : ""}, which may be ` +
        `stale${version ? ` (it resolves ${spec.range || "latest"} to ${version})` : ""}`,
    );
  }
  const manifest = version ? packument.versions[version] : undefined;
  if (!version || !manifest) {
    const all = listVersions(packument);
    const tags = Object.entries(packument["dist-tags"]).map(([t, v]) => `${t}: ${v}`);
    throw new PluginError(
      "plugin_version_not_found",
      `${spec.source === "jsr" ? "JSR" : "npm"} package ${spec.displayName} has no version ` +
        `matching ${locked?.version ?? (spec.range || "latest")}`,
      {
        hint: `Published: ${all.slice(-12).join(", ") || "none"}` +
          (tags.length ? `; dist-tags: ${tags.join(", ")}` : ""),
      },
    );
  }
  const declared = manifest.dist?.integrity ??
    (manifest.dist?.shasum ? shasumToIntegrity(manifest.dist.shasum) : null);
  if (!declared || !strongestHash(declared) || typeof manifest.dist?.tarball !== "string") {
    throw new PluginError(
      "plugin_integrity_missing",
      `the registry publishes no usable dist.integrity or dist.tarball for ${what(version)}`,
      { hint: "verifiers-ts only loads packages it can verify" },
    );
  }
  if (locked && integrityConflict(locked.integrity, declared)) {
    throw integrityMismatch(what(version), locked.integrity, declared, true, "the registry");
  }
  const declaredHex = hexOf(declared) ?? lockedHex;
  if (declaredHex && declaredHex !== lockedHex) {
    const dir = fromCache(declaredHex);
    if (dir) return finish(dir, version, `sha512-${hexToBase64(declaredHex)}`, fetched.fromCache);
  }
  let bytes: Uint8Array;
  try {
    bytes = await downloadTarball(manifest.dist.tarball, settings, what(version));
  } catch (err) {
    throw namingCorrupt(err, [declaredHex, lockedHex]);
  }
  const bad = checkIntegrity(bytes, declared);
  if (bad) throw integrityMismatch(what(version), declared, bad, false);
  if (locked) {
    const badLock = checkIntegrity(bytes, locked.integrity);
    if (badLock) throw integrityMismatch(what(version), locked.integrity, badLock, true);
  }
  const hex = sha512Hex(bytes);
  let dir: string;
  try {
    dir = installPackage(root, hex, bytes);
  } catch (err) {
    throw new PluginError(
      "plugin_package_invalid",
      `cannot unpack ${what(version)}: ${errorMessage(err)}`,
      { hint: "The tarball is not a gzipped tar archive as npm packs it" },
    );
  }
  for (const c of corrupt) {
    note(
      `cache entry ${c.dir} failed verification (${c.problem}); downloaded ` +
        `${spec.displayName} again into ${dir}`,
    );
  }
  return finish(dir, version, computeIntegrity(bytes), false);
}

/** True when the extracted package in `dir` declares this name and version. */
function isPackage(dir: string, name: string, version: string): boolean {
  const meta = readJson<{ name?: unknown; version?: unknown }>(join(dir, "package.json"));
  return meta?.name === name && meta?.version === version;
}

function hexToBase64(hex: string): string {
  let bin = "";
  for (let i = 0; i < hex.length; i += 2) {
    bin += String.fromCharCode(parseInt(hex.slice(i, i + 2), 16));
  }
  return btoa(bin);
}

/**
 * Fetches (or finds in the cache) the module behind an `http(s):`, `npm:` or `jsr:`
 * specifier. Throws `RemoteNotFound` (fetch_errors.ts) when the candidate is absent, and
 * {@link PluginError} for everything else (integrity, lock, registry, package shape).
 */
export function fetchPlugin(specifier: string, options: FetchOptions): Promise<FetchedPlugin> {
  if (specifier.startsWith("npm:") || specifier.startsWith("jsr:")) {
    return fetchPackage(specifier, parsePackageSpec(specifier), options);
  }
  if (/^https?:\/\//.test(specifier)) return fetchUrl(specifier, options);
  return Promise.reject(
    new PluginError("plugin_specifier_invalid", `cannot fetch "${specifier}"`, {
      hint: "Only http(s):, npm: and jsr: specifiers are fetched",
    }),
  );
}
