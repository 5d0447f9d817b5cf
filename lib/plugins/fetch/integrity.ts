/**
 * Subresource-integrity strings (`sha512-<base64>`), as npm's `dist.integrity` carries
 * them: computing, parsing and checking bytes against one. The strongest algorithm
 * listed wins; an integrity string without a known algorithm verifies nothing.
 *
 * @module
 */
import { createHash } from "node:crypto";

/** Hash algorithms an integrity string may use, weakest first. */
const ALGORITHMS = ["sha1", "sha256", "sha384", "sha512"] as const;

/** One hash algorithm of an integrity string. */
export type IntegrityAlgorithm = typeof ALGORITHMS[number];

/** One `<algorithm>-<base64 digest>` entry. */
export interface IntegrityHash {
  algorithm: IntegrityAlgorithm;
  digest: string;
}

/** The SRI string of `bytes` for one algorithm (`sha512` by default). */
export function computeIntegrity(
  bytes: Uint8Array,
  algorithm: IntegrityAlgorithm = "sha512",
): string {
  return `${algorithm}-${createHash(algorithm).update(bytes).digest("base64")}`;
}

/** Lowercase hex SHA-512 of `bytes` (the cache's content address). */
export function sha512Hex(bytes: Uint8Array): string {
  return createHash("sha512").update(bytes).digest("hex");
}

/** Lowercase hex SHA-256 of a string (names of index files). */
export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The strongest known hash of an SRI string (options after `?` ignored); null when none. */
export function strongestHash(integrity: string): IntegrityHash | null {
  let best: IntegrityHash | null = null;
  for (const token of integrity.trim().split(/\s+/)) {
    const m = /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/=]+)(\?.*)?$/.exec(token);
    if (!m) continue;
    const algorithm = m[1] as IntegrityAlgorithm;
    if (!best || ALGORITHMS.indexOf(algorithm) > ALGORITHMS.indexOf(best.algorithm)) {
      best = { algorithm, digest: m[2]! }; // required group of the match above
    }
  }
  return best;
}

/** The SRI form of an npm `dist.shasum` (hex SHA-1). */
export function shasumToIntegrity(shasum: string): string | null {
  if (!/^[0-9a-fA-F]{40}$/.test(shasum)) return null;
  const bytes = shasum.match(/../g)!.map((h) => String.fromCharCode(parseInt(h, 16)));
  return `sha1-${btoa(bytes.join(""))}`;
}

/**
 * Checks `bytes` against an SRI string using its strongest algorithm. Returns null when
 * they match, else the integrity the bytes actually have (same algorithm).
 */
export function checkIntegrity(bytes: Uint8Array, integrity: string): string | null {
  const want = strongestHash(integrity);
  if (!want) return computeIntegrity(bytes);
  const got = computeIntegrity(bytes, want.algorithm);
  return got === `${want.algorithm}-${want.digest}` ? null : got;
}

function hashes(integrity: string): Map<IntegrityAlgorithm, string> {
  const out = new Map<IntegrityAlgorithm, string>();
  for (const token of integrity.trim().split(/\s+/)) {
    const m = /^(sha1|sha256|sha384|sha512)-([A-Za-z0-9+/=]+)(\?.*)?$/.exec(token);
    if (m && !out.has(m[1] as IntegrityAlgorithm)) out.set(m[1] as IntegrityAlgorithm, m[2]!);
  }
  return out;
}

/**
 * True when two SRI strings contradict each other: they share an algorithm and the
 * digests differ. Strings without a common algorithm do not conflict (the bytes decide).
 */
export function integrityConflict(a: string, b: string): boolean {
  const ha = hashes(a);
  const hb = hashes(b);
  for (const [alg, digest] of ha) {
    const other = hb.get(alg);
    if (other !== undefined && other !== digest) return true;
  }
  return false;
}
