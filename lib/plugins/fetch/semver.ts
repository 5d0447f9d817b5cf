/**
 * Semantic versions and npm ranges, as the npm registry and its clients read them:
 * `^`, `~`, x-ranges (`1.x`, `1.2.*`, `*`), partial versions (`1.2`), primitives
 * (`>=1.2 <2`), hyphen ranges (`1.2 - 2.3`) and `||` unions. A prerelease version only
 * satisfies a range with a prerelease comparator on the same `major.minor.patch`.
 *
 * @module
 */

/** A parsed semantic version. */
export interface SemVer {
  major: number;
  minor: number;
  patch: number;
  /** Prerelease identifiers (`1.0.0-beta.2` -> `["beta", 2]`). */
  prerelease: (string | number)[];
  /** The version as written, without build metadata and leading `v`/`=`. */
  text: string;
}

type Op = "<" | "<=" | ">" | ">=" | "=";

interface Comparator {
  op: Op;
  v: SemVer;
}

const NUM = "0|[1-9]\\d*";
const PRE_ID = "(?:0|[1-9]\\d*|\\d*[a-zA-Z-][a-zA-Z0-9-]*)";
const VERSION_RE = new RegExp(
  `^[v=]?\\s*(${NUM})\\.(${NUM})\\.(${NUM})(?:-(${PRE_ID}(?:\\.${PRE_ID})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`,
);
const XR = "x|X|\\*|0|[1-9]\\d*";
const PARTIAL_RE = new RegExp(
  `^[v=]?\\s*(${XR})(?:\\.(${XR})(?:\\.(${XR})(?:-(${PRE_ID}(?:\\.${PRE_ID})*))?(?:\\+[0-9A-Za-z-.]+)?)?)?$`,
);

/** Parses a strict semantic version (a leading `v` or `=` is allowed); null when invalid. */
export function parseVersion(text: string): SemVer | null {
  const m = VERSION_RE.exec(text.trim());
  if (!m) return null;
  const prerelease = m[4] ? m[4].split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p)) : [];
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (![major, minor, patch].every(Number.isSafeInteger)) return null;
  return {
    major,
    minor,
    patch,
    prerelease,
    text: `${major}.${minor}.${patch}${m[4] ? `-${m[4]}` : ""}`,
  };
}

function comparePre(a: (string | number)[], b: (string | number)[]): number {
  if (a.length === 0 && b.length === 0) return 0;
  if (a.length === 0) return 1;
  if (b.length === 0) return -1;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return x < y ? -1 : 1;
    if (typeof x === "number") return -1;
    if (typeof y === "number") return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** Orders two versions: negative when `a < b`, 0 when equal, positive when `a > b`. */
function compareVersions(a: SemVer, b: SemVer): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch ||
    comparePre(a.prerelease, b.prerelease);
}

function ver(major: number, minor: number, patch: number, pre: (string | number)[] = []): SemVer {
  return {
    major,
    minor,
    patch,
    prerelease: pre,
    text: `${major}.${minor}.${patch}${pre.length ? `-${pre.join(".")}` : ""}`,
  };
}

interface Partial {
  major: number | null;
  minor: number | null;
  patch: number | null;
  pre: (string | number)[];
}

function parsePartial(text: string): Partial | null {
  const m = PARTIAL_RE.exec(text);
  if (!m) return null;
  const n = (s: string | undefined) => (s === undefined || /^[xX*]$/.test(s) ? null : Number(s));
  const major = n(m[1]);
  const minor = major === null ? null : n(m[2]);
  const patch = minor === null ? null : n(m[3]);
  const pre = patch !== null && m[4]
    ? m[4].split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p))
    : [];
  return { major, minor, patch, pre };
}

const ANY: Comparator[] = [{ op: ">=", v: ver(0, 0, 0) }];
const NONE: Comparator[] = [{ op: "<", v: ver(0, 0, 0, [0]) }];

/** `1.2` -> `>=1.2.0 <1.3.0-0`; `1.2.3` -> `=1.2.3`; `*` -> any. */
function xRange(p: Partial): Comparator[] {
  if (p.major === null) return ANY;
  if (p.minor === null) {
    return [{ op: ">=", v: ver(p.major, 0, 0) }, { op: "<", v: ver(p.major + 1, 0, 0, [0]) }];
  }
  if (p.patch === null) {
    return [{ op: ">=", v: ver(p.major, p.minor, 0) }, {
      op: "<",
      v: ver(p.major, p.minor + 1, 0, [0]),
    }];
  }
  return [{ op: "=", v: ver(p.major, p.minor, p.patch, p.pre) }];
}

function tilde(p: Partial): Comparator[] {
  if (p.major === null || p.minor === null) return xRange(p);
  const lo = ver(p.major, p.minor, p.patch ?? 0, p.pre);
  return [{ op: ">=", v: lo }, { op: "<", v: ver(p.major, p.minor + 1, 0, [0]) }];
}

function caret(p: Partial): Comparator[] {
  if (p.major === null) return ANY;
  const lo = ver(p.major, p.minor ?? 0, p.patch ?? 0, p.pre);
  let hi: SemVer;
  if (p.major > 0 || p.minor === null) hi = ver(p.major + 1, 0, 0, [0]);
  else if (p.minor > 0 || p.patch === null) hi = ver(0, p.minor + 1, 0, [0]);
  else hi = ver(0, 0, p.patch + 1, [0]);
  return [{ op: ">=", v: lo }, { op: "<", v: hi }];
}

function primitive(op: Op, p: Partial): Comparator[] {
  if (op === "=") return xRange(p);
  if (p.major === null) return op === "<" || op === ">" ? NONE : ANY;
  const full = p.minor !== null && p.patch !== null;
  if (full) return [{ op, v: ver(p.major, p.minor!, p.patch!, p.pre) }];
  const minor = p.minor ?? 0;
  switch (op) {
    case ">=":
      return [{ op: ">=", v: ver(p.major, minor, 0) }];
    case "<":
      return [{ op: "<", v: ver(p.major, minor, 0, [0]) }];
    case ">":
      return [{
        op: ">=",
        v: p.minor === null ? ver(p.major + 1, 0, 0) : ver(p.major, minor + 1, 0),
      }];
    case "<=":
      return [{
        op: "<",
        v: p.minor === null ? ver(p.major + 1, 0, 0, [0]) : ver(p.major, minor + 1, 0, [0]),
      }];
  }
}

function hyphen(a: Partial, b: Partial): Comparator[] {
  const lo: Comparator[] = a.major === null
    ? []
    : [{ op: ">=", v: ver(a.major, a.minor ?? 0, a.patch ?? 0, a.pre) }];
  let hi: Comparator[] = [];
  if (b.major !== null) {
    if (b.minor === null) hi = [{ op: "<", v: ver(b.major + 1, 0, 0, [0]) }];
    else if (b.patch === null) hi = [{ op: "<", v: ver(b.major, b.minor + 1, 0, [0]) }];
    else hi = [{ op: "<=", v: ver(b.major, b.minor, b.patch, b.pre) }];
  }
  const out = [...lo, ...hi];
  return out.length ? out : ANY;
}

/** A parsed range: a union of comparator sets. */
export type Range = Comparator[][];

/** Parses an npm range; null when it is not one. An empty string means any version. */
export function parseRange(text: string): Range | null {
  const out: Range = [];
  for (const part of text.split("||")) {
    const s = part.trim().replace(/(<=|>=|<|>|=|~>?|\^)\s+/g, "$1");
    const [, from, to] = /^(\S+)\s+-\s+(\S+)$/.exec(s) ?? [];
    if (from !== undefined && to !== undefined) {
      const a = parsePartial(from);
      const b = parsePartial(to);
      if (!a || !b) return null;
      out.push(hyphen(a, b));
      continue;
    }
    const set: Comparator[] = [];
    for (const tok of s.split(/\s+/).filter((t) => t)) {
      const m = /^(<=|>=|<|>|=|~>?|\^)?(.*)$/.exec(tok)!;
      const p = parsePartial(m[2] ?? "");
      if (!p) return null;
      const op = m[1] ?? "";
      if (op === "^") set.push(...caret(p));
      else if (op.startsWith("~")) set.push(...tilde(p));
      else if (op === "") set.push(...xRange(p));
      else set.push(...primitive(op as Op, p));
    }
    out.push(set.length ? set : ANY);
  }
  return out;
}

function holds(c: Comparator, v: SemVer): boolean {
  const d = compareVersions(v, c.v);
  switch (c.op) {
    case "<":
      return d < 0;
    case "<=":
      return d <= 0;
    case ">":
      return d > 0;
    case ">=":
      return d >= 0;
    case "=":
      return d === 0;
  }
}

function setAllows(set: Comparator[], v: SemVer): boolean {
  if (!set.every((c) => holds(c, v))) return false;
  if (v.prerelease.length === 0) return true;
  // a prerelease only matches a comparator that opts into prereleases of its own tuple
  return set.some((c) =>
    c.v.prerelease.length > 0 && c.v.major === v.major && c.v.minor === v.minor &&
    c.v.patch === v.patch
  );
}

/** True when `version` satisfies `range` (npm rules, prereleases excluded unless opted in). */
export function satisfies(version: SemVer | string, range: Range | string): boolean {
  const v = typeof version === "string" ? parseVersion(version) : version;
  const r = typeof range === "string" ? parseRange(range) : range;
  if (!v || !r) return false;
  return r.some((set) => setAllows(set, v));
}

/** The highest of `versions` that satisfies `range`, or null. */
export function maxSatisfying(versions: readonly string[], range: Range | string): string | null {
  const r = typeof range === "string" ? parseRange(range) : range;
  if (!r) return null;
  let best: SemVer | null = null;
  let bestText: string | null = null;
  for (const text of versions) {
    const v = parseVersion(text);
    if (!v || !satisfies(v, r)) continue;
    if (!best || compareVersions(v, best) > 0) {
      best = v;
      bestText = text;
    }
  }
  return bestText;
}

/** Sorts version strings ascending (invalid ones dropped). */
export function sortVersions(versions: readonly string[]): string[] {
  return versions
    .map((t) => [t, parseVersion(t)] as const)
    .filter((p): p is readonly [string, SemVer] => p[1] !== null)
    .sort((a, b) => compareVersions(a[1], b[1]))
    .map((p) => p[0]);
}
