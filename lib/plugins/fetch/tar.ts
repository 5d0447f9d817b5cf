/**
 * A small reader for the gzipped tar archives npm packages ship as (ustar, with pax and
 * GNU long-name headers), and a safe extractor: header checksums are verified, the first
 * path component (`package/`) is stripped as npm does, and entries that would land
 * outside the target directory, links and devices are skipped.
 *
 * @module
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { gunzipSync } from "node:zlib";

/** One entry of a tar archive. */
export interface TarEntry {
  /** Path as stored (pax / GNU long names applied), `/`-separated. */
  path: string;
  type: "file" | "directory" | "symlink" | "link" | "other";
  /** Permission bits. */
  mode: number;
  /** File contents (empty for non-files). */
  data: Uint8Array;
}

/** Refuses archives whose unpacked size exceeds this (a decompression bomb guard). */
const MAX_UNPACKED_BYTES = 512 * 1024 * 1024;

const decoder = new TextDecoder();

function field(block: Uint8Array, offset: number, length: number): string {
  const raw = block.subarray(offset, offset + length);
  const end = raw.indexOf(0);
  return decoder.decode(end >= 0 ? raw.subarray(0, end) : raw);
}

function octal(block: Uint8Array, offset: number, length: number): number {
  if ((block[offset] ?? 0) & 0x80) {
    // base-256 (GNU) for large values
    let n = 0;
    for (let i = offset + 1; i < offset + length; i++) n = n * 256 + (block[i] ?? 0);
    return n;
  }
  const text = field(block, offset, length).trim();
  if (text === "") return 0;
  if (!/^[0-7]+$/.test(text)) throw new Error(`invalid octal field "${text}"`);
  return parseInt(text, 8);
}

function checksumOk(block: Uint8Array): boolean {
  const stored = octal(block, 148, 8);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : block[i] ?? 0;
  return sum === stored;
}

function parsePax(data: Uint8Array): Record<string, string> {
  const out: Record<string, string> = {};
  let pos = 0;
  while (pos < data.length) {
    const space = data.indexOf(0x20, pos);
    if (space < 0) break;
    const len = Number(decoder.decode(data.subarray(pos, space)));
    if (!Number.isInteger(len) || len <= 0) break;
    const record = decoder.decode(data.subarray(space + 1, pos + len - 1));
    const eq = record.indexOf("=");
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    pos += len;
  }
  return out;
}

/** Decompresses gzip bytes, refusing output larger than `maxBytes`. */
export function gunzip(bytes: Uint8Array, maxBytes: number = MAX_UNPACKED_BYTES): Uint8Array {
  return new Uint8Array(gunzipSync(bytes, { maxOutputLength: maxBytes }));
}

/** Reads every entry of an (uncompressed) tar archive. Throws on a corrupt header. */
export function readTar(tar: Uint8Array): TarEntry[] {
  const entries: TarEntry[] = [];
  let pos = 0;
  let longName: string | null = null;
  let pax: Record<string, string> = {};
  let globalPax: Record<string, string> = {};
  while (pos + 512 <= tar.length) {
    const block = tar.subarray(pos, pos + 512);
    if (block.every((b) => b === 0)) break;
    if (!checksumOk(block)) throw new Error(`corrupt tar header at byte ${pos}`);
    const size = octal(block, 124, 12);
    const typeflag = String.fromCharCode(block[156] || 48);
    const start = pos + 512;
    if (start + size > tar.length) throw new Error(`truncated tar entry at byte ${pos}`);
    const data = tar.subarray(start, start + size);
    pos = start + Math.ceil(size / 512) * 512;
    if (typeflag === "L") {
      longName = decoder.decode(data).replace(/\0+$/, "");
      continue;
    }
    if (typeflag === "x") {
      pax = parsePax(data);
      continue;
    }
    if (typeflag === "g") {
      globalPax = { ...globalPax, ...parsePax(data) };
      continue;
    }
    if (typeflag === "K") continue;
    const magic = field(block, 257, 6);
    const prefix = magic.startsWith("ustar") ? field(block, 345, 155) : "";
    const name = field(block, 0, 100);
    const path = pax.path ?? longName ?? globalPax.path ?? (prefix ? `${prefix}/${name}` : name);
    const type: TarEntry["type"] = typeflag === "0" || typeflag === "7"
      ? "file"
      : typeflag === "5"
      ? "directory"
      : typeflag === "2"
      ? "symlink"
      : typeflag === "1"
      ? "link"
      : "other";
    entries.push({
      path,
      type: type === "file" && path.endsWith("/") ? "directory" : type,
      mode: octal(block, 100, 8),
      data: type === "file" ? data : new Uint8Array(),
    });
    longName = null;
    pax = {};
  }
  return entries;
}

/**
 * The safe relative path of a package entry: first component stripped, no absolute
 * path, no `..`; null when the entry must be skipped.
 */
function packagePath(entryPath: string): string | null {
  const parts = entryPath.replaceAll("\\", "/").split("/").filter((p) => p !== "" && p !== ".");
  if (parts.length < 2) return null;
  const rest = parts.slice(1);
  if (rest.some((p) => p === ".." || p.includes("\0"))) return null;
  return rest.join("/");
}

/**
 * Extracts an npm package tarball (`.tgz`) into `dir`, stripping the first path
 * component. Returns the relative paths of the files written.
 */
export function extractPackage(tgz: Uint8Array, dir: string): string[] {
  const entries = readTar(gunzip(tgz));
  const root = resolve(dir);
  mkdirSync(root, { recursive: true });
  const written: string[] = [];
  for (const entry of entries) {
    if (entry.type !== "file") continue;
    const rel = packagePath(entry.path);
    if (!rel) continue;
    const target = resolve(join(root, rel));
    if (!target.startsWith(root + sep)) continue;
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, entry.data, { mode: entry.mode & 0o111 ? 0o755 : 0o644 });
    written.push(rel);
  }
  return written;
}
