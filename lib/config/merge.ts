/**
 * Deep merge of config layers: dicts merge key by key (later wins); an override
 * that changes a subtree's `id` or `type` replaces that subtree.
 *
 * Keys come from users (files, flags), so every helper here reads own properties only
 * (`Object.hasOwn`) and writes with `Object.defineProperty`: keys such as `__proto__`,
 * `constructor` or `toString` are plain data, never the object's prototype or methods.
 *
 * @module
 */
import { isRecord } from "../../kit/util/is_record.ts";

/** A plain JSON object. */
export type Json = Record<string, unknown>;

/** Deepest nesting of objects and lists a config may have (files and JSON flag values). */
export const MAX_CONFIG_DEPTH = 64;

/** True for a plain object (not an array, not null). */
export function isPlainObject(v: unknown): v is Json {
  return isRecord(v);
}

/** Sets an own, enumerable property, whatever its name (`__proto__` included). */
export function setOwn(obj: Json, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** The own property `key` of `obj`, or undefined (never an inherited one). */
function getOwn(obj: Json, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/**
 * True when `value` nests objects/lists more than `limit` levels deep (checked without
 * recursion, so any depth is safe to ask about).
 */
export function nestingDepthExceeds(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (d >= limit) return true;
    for (const x of Array.isArray(v) ? v : Object.values(v)) stack.push([x, d + 1]);
  }
  return false;
}

/** A deep copy of JSON-like data that keeps every own key as data. */
function copy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(copy);
  if (isPlainObject(v)) {
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, copy(x));
    return out;
  }
  return v;
}

/** Merges `over` onto `base` without mutating either. */
export function mergeConfig(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return copy(over);
  for (const key of ["id", "type"]) {
    if (Object.hasOwn(over, key) && Object.hasOwn(base, key) && over[key] !== base[key]) {
      return copy(over);
    }
  }
  const out = copy(base) as Json;
  for (const [k, v] of Object.entries(over)) {
    setOwn(out, k, Object.hasOwn(out, k) ? mergeConfig(out[k], v) : copy(v));
  }
  return out;
}

/** Replaces every string `"None"` with null, recursively (Python's null spelling). */
export function noneToNull(v: unknown): unknown {
  if (v === "None") return null;
  if (Array.isArray(v)) return v.map(noneToNull);
  if (isPlainObject(v)) {
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) setOwn(out, k, noneToNull(x));
    return out;
  }
  return v;
}

/** Reads the value at a path (own properties only), or undefined. */
export function getPath(root: unknown, path: readonly string[]): unknown {
  let cur = root;
  for (const k of path) {
    if (!isPlainObject(cur) && !Array.isArray(cur)) return undefined;
    cur = getOwn(cur as Json, k);
  }
  return cur;
}

/** Sets the value at a path, creating plain objects on the way (lists on it are indexed). */
export function setPath(root: Json, path: readonly string[], value: unknown): void {
  const last = path.at(-1);
  if (last === undefined) throw new Error("setPath: empty path");
  let cur: Json = root;
  for (const k of path.slice(0, -1)) {
    const next = getOwn(cur, k);
    if (!isPlainObject(next) && !Array.isArray(next)) setOwn(cur, k, {});
    cur = cur[k] as Json;
  }
  setOwn(cur, last, value);
}

/** Wraps a value under a path: `nest(["a","b"], 1)` -> `{a: {b: 1}}`. */
export function nest(path: readonly string[], value: unknown): unknown {
  let out = value;
  for (const key of [...path].reverse()) {
    const o: Json = {};
    setOwn(o, key, out);
    out = o;
  }
  return out;
}
