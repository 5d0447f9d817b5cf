/**
 * The content-addressed plugin cache under the user cache dir (`<cache>/plugins`):
 * package tarballs and their extracted trees by the SHA-512 of the tarball, fetched
 * URL modules by the SHA-512 of their bytes, and small index files (registry metadata,
 * URL -> content) for offline reuse. Every write is atomic (temp file or directory,
 * then rename), so concurrent runs never see half an entry.
 *
 * @module
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import process from "node:process";
import { userCacheSubdir } from "../../runtime/cache_dir.ts";
import { sha256Hex } from "./integrity.ts";
import { extractPackage } from "./tar.ts";

/** Name of the marker file written into a fully extracted package directory. */
const COMPLETE_MARKER = ".vf-complete";

let counter = 0;

function tempName(path: string): string {
  return `${path}.tmp-${process.pid}-${Date.now()}-${counter++}`;
}

/** Writes a file atomically (temp file in the same directory, then rename). */
export function writeAtomic(path: string, data: string | Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = tempName(path);
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/** The plugin cache root: `dir` when given, else `<user cache dir>/plugins`. */
export function pluginCacheRoot(dir?: string): string {
  if (dir) {
    mkdirSync(dir, { recursive: true });
    return dir;
  }
  return userCacheSubdir("plugins");
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

/** The cached tarball bytes of a content address, or undefined. */
export function readCachedTarball(root: string, hex: string): Uint8Array | undefined {
  try {
    return new Uint8Array(readFileSync(tarballPath(root, hex)));
  } catch {
    return undefined;
  }
}

/**
 * The extracted package directory of a verified tarball (`<root>/packages/<hex>`),
 * extracting it first when needed. The caller has verified `tgz` hashes to `hex`.
 */
export function installPackage(root: string, hex: string, tgz: Uint8Array): string {
  const dir = join(root, "packages", hex);
  if (existsSync(join(dir, COMPLETE_MARKER))) return dir;
  if (!existsSync(tarballPath(root, hex))) writeAtomic(tarballPath(root, hex), tgz);
  const tmp = tempName(dir);
  try {
    extractPackage(tgz, tmp);
    writeFileSync(join(tmp, COMPLETE_MARKER), hex + "\n");
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    if (existsSync(join(dir, COMPLETE_MARKER))) return dir; // a concurrent run won
    throw err;
  }
  return dir;
}

/** The extracted directory of a content address when it is complete, else undefined. */
export function installedPackage(root: string, hex: string): string | undefined {
  const dir = join(root, "packages", hex);
  return existsSync(join(dir, COMPLETE_MARKER)) ? dir : undefined;
}
