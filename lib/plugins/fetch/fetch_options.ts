/**
 * What a plugin fetch is given and gives back, and what the package and URL paths share:
 * the import mode, notes for the user, integrity digests and mismatch errors.
 *
 * @module
 */
import process from "node:process";
import { PluginError } from "../../../kit/errors.ts";
import { getEnv } from "../../../kit/_runtime/env.ts";
import type { PluginLock } from "../lock.ts";
import { defaultImportMode, type ImportMode } from "./entry.ts";
import { strongestHash } from "./integrity.ts";

/** Options of {@link fetchPlugin}. */
export interface FetchOptions {
  /** Directory whose `.npmrc` applies. */
  cwd: string;
  /** Cache root for fetched plugins. @default `<user cache dir>/plugins` */
  cacheDir?: string;
  /** npm registry base URL (wins over `VF_NPM_REGISTRY`, the npm settings and `.npmrc`). */
  registry?: string;
  /** JSR npm-compatible base URL (wins over `VF_JSR_REGISTRY` and `@jsr:registry`). */
  jsrRegistry?: string;
  /** Environment lookup (registry settings). @default the process environment */
  env?: (name: string) => string | undefined;
  /** The launch's `vf.lock`. */
  lock?: PluginLock | undefined;
  /** How to import the fetched module. @default `VF_PLUGIN_IMPORT`, else by host */
  importMode?: ImportMode;
  /**
   * Notes for the user (e.g. "registry unreachable, using cached metadata", "a modified
   * cache entry was re-extracted"). @default a `vf: note: ...` line on stderr
   */
  log?: (line: string) => void;
}

/** A fetched plugin module, ready to import. */
export interface FetchedPlugin {
  /** The specifier as given. */
  specifier: string;
  /** The exact thing fetched (`npm:<name>@<version>`, `jsr:@s/n@<version>` or the URL). */
  resolved: string;
  /** The exact version for package specifiers. */
  version?: string;
  /** SRI (sha512) of the tarball or file. */
  integrity: string;
  /** The module file in the cache. */
  file: string;
  /** What to pass to `import()`. */
  importTarget: string;
  /** True when no network was used. */
  offline: boolean;
  /** True for a single fetched file (a URL): relative imports cannot work. */
  singleFile: boolean;
}

/** The hex sha512 digest of an SRI string, or null without a sha512 hash. */
export function hexOf(integrity: string): string | null {
  const h = strongestHash(integrity);
  if (!h || h.algorithm !== "sha512") return null;
  const bin = atob(h.digest);
  let hex = "";
  for (let i = 0; i < bin.length; i++) hex += bin.charCodeAt(i).toString(16).padStart(2, "0");
  return hex;
}

/** How a fetched module is imported: the option, else `VF_PLUGIN_IMPORT`, else by host. */
export function modeOf(options: FetchOptions): ImportMode {
  const env = (options.env ?? getEnv)("VF_PLUGIN_IMPORT");
  return options.importMode ?? (env === "data" || env === "file" ? env : defaultImportMode());
}

/** Where notes for the user go. */
export function noteOf(options: FetchOptions): (line: string) => void {
  return options.log ?? ((line) => process.stderr.write(`vf: note: ${line}\n`));
}

/**
 * An integrity failure. `expected` is what the trusted side says (vf.lock when `locked`,
 * else the registry's `dist.integrity`), `got` what the other side has (the registry's
 * published value, or the downloaded bytes).
 */
export function integrityMismatch(
  what: string,
  expected: string,
  got: string,
  locked: boolean,
  gotLabel = "the downloaded tarball",
) {
  return new PluginError(
    locked ? "plugin_lock_mismatch" : "plugin_integrity_mismatch",
    locked
      ? `integrity check failed for ${what}: vf.lock has ${expected}, ${gotLabel} has ${got}`
      : `integrity check failed for ${what}: the registry publishes ${expected}, ${gotLabel} ` +
        `has ${got}`,
    {
      hint: locked
        ? "The content changed since it was locked; if that is expected, delete the entry and run with --lock"
        : "The download does not match what the registry published (a tampered mirror or a broken proxy); nothing was cached",
    },
  );
}
