/**
 * Deep merge of config layers: dicts merge key by key (later wins); an override
 * that changes a subtree's `id` or `type` replaces that subtree.
 *
 * @module
 */

/** A plain JSON object. */
export type Json = Record<string, unknown>;

/** True for a plain object (not an array, not null). */
export function isPlainObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Merges `over` onto `base` without mutating either. */
export function mergeConfig(base: unknown, over: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(over)) return structuredClone(over);
  for (const key of ["id", "type"]) {
    if (key in over && key in base && over[key] !== base[key]) return structuredClone(over);
  }
  const out: Json = structuredClone(base);
  for (const [k, v] of Object.entries(over)) {
    out[k] = k in out ? mergeConfig(out[k], v) : structuredClone(v);
  }
  return out;
}

/** Replaces every string `"None"` with null, recursively (Python's null spelling). */
export function noneToNull(v: unknown): unknown {
  if (v === "None") return null;
  if (Array.isArray(v)) return v.map(noneToNull);
  if (isPlainObject(v)) {
    const out: Json = {};
    for (const [k, x] of Object.entries(v)) out[k] = noneToNull(x);
    return out;
  }
  return v;
}

/** Reads the value at a path, or undefined. */
export function getPath(root: unknown, path: readonly string[]): unknown {
  let cur = root;
  for (const k of path) {
    if (!isPlainObject(cur) && !Array.isArray(cur)) return undefined;
    cur = (cur as Json)[k];
  }
  return cur;
}

/** Sets the value at a path, creating plain objects on the way. */
export function setPath(root: Json, path: readonly string[], value: unknown): void {
  let cur: Json = root;
  for (const k of path.slice(0, -1)) {
    if (!isPlainObject(cur[k])) cur[k] = {};
    cur = cur[k] as Json;
  }
  cur[path[path.length - 1]] = value;
}

/** Wraps a value under a path: `nest(["a","b"], 1)` -> `{a: {b: 1}}`. */
export function nest(path: readonly string[], value: unknown): unknown {
  let out = value;
  for (let i = path.length - 1; i >= 0; i--) out = { [path[i]]: out };
  return out;
}
