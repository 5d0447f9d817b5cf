/**
 * The content-addressed plugin cache under the user cache dir (`<cache>/plugins`):
 * package tarballs and their extracted trees by the SHA-512 of the tarball, fetched
 * URL modules by the SHA-512 of their bytes, and small index files (registry metadata,
 * URL -> content) for offline reuse.
 *
 * Safe across processes without a lock: every file is written to a temp name and
 * renamed into place; a package is extracted into a temp directory and renamed into a
 * free slot (`packages/<hex>`, then `<hex>.r1`, ...), and a directory that exists is
 * never deleted or replaced, since another process may be importing from it. Each
 * extracted package carries an integrity manifest (every file's SHA-512, written before
 * the rename) that is checked on every use; an entry that no longer matches is left
 * alone and the package is extracted again from its verified tarball into the next slot.
 *
 * @module
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../../../kit/errors.ts";
import { userCacheSubdir } from "../../../kit/runtime/cache_dir.ts";
import { computeIntegrity, sha256Hex, sha512Hex } from "./integrity.ts";
import { extractPackage } from "./tar.ts";
import { tempPathBeside, writeFileAtomic } from "../../../kit/util/write_atomic.ts";

/** Name of the integrity manifest written into every extracted package directory. */
export const MANIFEST_NAME = ".vf-integrity.json";

/** How many repair slots (`<hex>.r<n>`) a content address may use before giving up. */
const MAX_SLOTS = 16;

/** The integrity manifest of an extracted package. */
interface PackageManifest {
  /** SRI of the tarball the tree was extracted from. */
  tarball: string;
  /** Relative path (`/`-separated) -> SRI of the file's bytes. */
  files: Record<string, string>;
}

/** An extracted package entry that failed verification. */
export interface CorruptEntry {
  /** The directory. */
  dir: string;
  /** What is wrong, e.g. `dist/plugin.js was modified`. */
  problem: string;
}

/** What the cache holds for a content address. */
export interface InstalledLookup {
  /** A verified directory, when there is one. */
  dir?: string;
  /** The entries that exist but failed verification. */
  corrupt: CorruptEntry[];
}

/**
 * The plugin cache root: `dir` when given, else `<user cache dir>/plugins`. It holds an
 * empty `node_modules` directory: Bun installs a module's missing dependencies on the fly
 * only when no `node_modules` directory is found above the importing file, so this keeps
 * Bun from fetching anything for plugin code behind the resolver's back (as Deno and the
 * single-file binary already do, a dependency that is not bundled fails to resolve).
 */
export function pluginCacheRoot(dir?: string): string {
  const root = dir ?? userCacheSubdir("plugins");
  mkdirSync(join(root, "node_modules"), { recursive: true });
  return root;
}

/** Path of a cached package tarball by its SHA-512 hex. */
export function tarballPath(root: string, hex: string): string {
  return join(root, "tarballs", `${hex}.tgz`);
}

/** Path of a cached registry document (packument) of one registry and package. */
export function metadataPath(root: string, registry: string, name: string): string {
  return join(root, "metadata", `${sha256Hex(`${registry}\0${name}`)}.json`);
}

/** Path of the index entry of a fetched URL (which content it last had). */
export function urlIndexPath(root: string, url: string): string {
  return join(root, "urls", `${sha256Hex(url)}.json`);
}

/** Path of a fetched module file: its content address, then its own file name. */
export function moduleFilePath(root: string, hex: string, fileName: string): string {
  return join(root, "modules", hex, fileName);
}

/** Reads a JSON file; undefined when it is missing or unreadable. */
export function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}

/** The cached tarball bytes of a content address when they still hash to it, else undefined. */
export function readCachedTarball(root: string, hex: string): Uint8Array | undefined {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(tarballPath(root, hex)));
  } catch {
    return undefined;
  }
  return sha512Hex(bytes) === hex ? bytes : undefined;
}

/** True when a tarball file exists for `hex` but its bytes do not hash to it. */
export function tarballCorrupt(root: string, hex: string): boolean {
  return existsSync(tarballPath(root, hex)) && readCachedTarball(root, hex) === undefined;
}

/** Every regular file under `dir` (relative, `/`-separated); other entries as `!path`. */
function listTree(dir: string, prefix = ""): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...listTree(join(dir, e.name), rel));
    else if (e.isFile()) out.push(rel);
    else out.push(`!${rel}`);
  }
  return out;
}

function hashFiles(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const rel of listTree(dir).sort()) {
    if (rel.startsWith("!")) throw new Error(`unexpected non-file entry ${rel.slice(1)}`);
    files[rel] = computeIntegrity(new Uint8Array(readFileSync(join(dir, rel))));
  }
  return files;
}

/** Null when `dir` matches its manifest, else what is wrong. */
export function verifyPackageDir(dir: string): string | null {
  const manifest = readJson<PackageManifest>(join(dir, MANIFEST_NAME));
  if (!manifest || typeof manifest.files !== "object" || manifest.files === null) {
    return `its integrity manifest ${MANIFEST_NAME} is missing or unreadable`;
  }
  let present: string[];
  try {
    present = listTree(dir);
  } catch (err) {
    return `it cannot be read (${errorMessage(err)})`;
  }
  const expected = new Set(Object.keys(manifest.files));
  for (const rel of present) {
    if (rel === MANIFEST_NAME) continue;
    if (rel.startsWith("!")) return `${rel.slice(1)} is not a regular file`;
    if (!expected.has(rel)) return `${rel} is not part of the package`;
  }
  for (const [rel, integrity] of Object.entries(manifest.files)) {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(readFileSync(join(dir, rel)));
    } catch {
      return `${rel} is missing`;
    }
    if (computeIntegrity(bytes) !== integrity) return `${rel} was modified`;
  }
  return null;
}

function slotDir(root: string, hex: string, slot: number): string {
  return join(root, "packages", slot === 0 ? hex : `${hex}.r${slot}`);
}

/**
 * The verified extracted directory of a content address, if any, and the entries of it
 * that exist but fail verification (modified, truncated, or left by an older cache).
 */
export function findInstalledPackage(root: string, hex: string): InstalledLookup {
  const corrupt: CorruptEntry[] = [];
  for (let slot = 0; slot < MAX_SLOTS; slot++) {
    const dir = slotDir(root, hex, slot);
    if (!existsSync(dir)) break;
    const problem = verifyPackageDir(dir);
    if (problem === null) return { dir, corrupt };
    corrupt.push({ dir, problem });
  }
  return { corrupt };
}

function isTaken(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === "ENOTEMPTY" || code === "EEXIST" || code === "EPERM" || code === "EACCES" ||
    code === "EISDIR";
}

/**
 * The verified extracted directory of a tarball (whose bytes the caller has verified to
 * hash to `hex`), extracting it when no verified entry exists. Never removes or replaces
 * a directory but its own temp one; when another process renames its copy into place
 * first, that copy is used.
 */
export function installPackage(root: string, hex: string, tgz: Uint8Array): string {
  const found = findInstalledPackage(root, hex);
  if (found.dir) return found.dir;
  if (readCachedTarball(root, hex) === undefined) writeFileAtomic(tarballPath(root, hex), tgz);
  const packages = join(root, "packages");
  mkdirSync(packages, { recursive: true });
  const tmp = tempPathBeside(join(packages, hex));
  try {
    extractPackage(tgz, tmp);
    mkdirSync(join(tmp, "node_modules"), { recursive: true });
    const manifest: PackageManifest = { tarball: computeIntegrity(tgz), files: hashFiles(tmp) };
    writeFileSync(join(tmp, MANIFEST_NAME), JSON.stringify(manifest));
    for (let slot = 0; slot < MAX_SLOTS; slot++) {
      const dir = slotDir(root, hex, slot);
      if (existsSync(dir)) {
        if (verifyPackageDir(dir) === null) return dir;
        continue;
      }
      try {
        renameSync(tmp, dir);
        return dir;
      } catch (err) {
        if (!isTaken(err)) throw err;
        // another process renamed its copy into this slot first
        if (lstatSync(dir, { throwIfNoEntry: false }) && verifyPackageDir(dir) === null) {
          return dir;
        }
      }
    }
    throw new Error(
      `every cache slot of this package under ${packages} is corrupt; remove ${
        join(packages, `${hex}*`)
      }`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
