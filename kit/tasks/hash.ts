/**
 * Task hashing, byte-compatible with Python `verifiers`:
 * `sha256(json.dumps(data.model_dump(mode="json", exclude_none=True), sort_keys=True))`,
 * where `data` is the task's pydantic `TaskData` (see {@link canonicalTaskData}).
 *
 * Numbers: JavaScript has one number type, so `1` and `1.0` are the same value. A number is
 * written the way Python writes `json.loads(JSON.stringify(x))`: an integer below 1e21 in
 * magnitude is written as an int (`1`, `-0` → `0`), anything else with Python's float
 * `repr` (`0.5`, `1e-07`, `1e+21`, `1.5e+300`), and non-finite values as `NaN`,
 * `Infinity`, `-Infinity`. Bigints are written as ints. The fields `TaskData` types as
 * `float` (timeouts, resources) are written as floats ({@link PyFloat}); but an integral
 * float inside a task-specific field (Python `1.0`) is written `1` here, so such tasks hash
 * differently on the two sides: keep integral task data as ints in Python too.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { pythonFloatRepr } from "../util/python_float.ts";
import { pythonJsonString } from "../util/python_json_string.ts";

export { pythonFloatRepr } from "../util/python_float.ts";

function pyNumber(x: number): string {
  if (Number.isInteger(x) && Math.abs(x) < 1e21) return Object.is(x, -0) ? "0" : String(x);
  return pythonFloatRepr(x);
}

/** Compares two strings by Unicode code point (Python's `str` order). */
export function compareCodePoints(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(j)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  const ra = a.length - i;
  const rb = b.length - j;
  return ra === rb ? 0 : ra < rb ? -1 : 1;
}

/**
 * Python `json.dumps(value, sort_keys=True)` byte for byte (default separators `", "` and
 * `": "`, `ensure_ascii`). Objects are plain JSON objects; `undefined` in an array is
 * written as `null` and omitted in an object (as `JSON.stringify` does).
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "number":
      return pyNumber(value);
    case "bigint":
      return value.toString();
    case "string":
      return pythonJsonString(value);
    case "object":
      if (value instanceof PyFloat) return pythonFloatRepr(value.value);
      break;
    default:
      throw new TypeError(`Cannot serialize a ${typeof value} as JSON`);
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      out += (i === 0 ? "" : ", ") + pythonJsonDumps(value[i]);
    }
    return out + "]";
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  // UTF-16 order (the default sort) is code point order unless a surrogate is compared
  keys.sort(keys.some((k) => SURROGATE.test(k)) ? compareCodePoints : undefined);
  let out = "{";
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    out += (first ? "" : ", ") + pythonJsonString(k) + ": " + pythonJsonDumps(v);
    first = false;
  }
  return out + "}";
}

const SURROGATE = /[\ud800-\udfff]/;

/**
 * A number Python holds as a `float`: {@link pythonJsonDumps} writes it with Python's float
 * `repr` even when it is integral (`new PyFloat(10)` → `10.0`).
 */
export class PyFloat {
  /** The value. */
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
}

function dropNone(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(obj)) {
    const v = obj[k];
    if (v !== null && v !== undefined) out[k] = v;
  }
  return out;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof PyFloat);
}

/** A pydantic sub-model dump: `None` fields dropped at every depth (all nested values are models). */
function dumpModel(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dumpModel);
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v)) {
      const x = v[k];
      if (x !== null && x !== undefined) out[k] = dumpModel(x);
    }
    return out;
  }
  return v;
}

/** A model whose listed fields are Python floats (`TaskTimeout`, `TaskResources`). */
function dumpFloatModel(v: unknown, floats: readonly string[]): unknown {
  if (!isObject(v)) return v;
  const out = dumpModel(v) as Record<string, unknown>;
  for (const k of floats) if (typeof out[k] === "number") out[k] = new PyFloat(out[k] as number);
  return out;
}

const TIMEOUT_FLOATS = ["setup", "agent", "finalize", "scoring"] as const;
const RESOURCE_FLOATS = ["cpu", "memory", "disk"] as const;

/**
 * The canonical form of task data: what Python's
 * `WireTaskData(**data).model_dump(mode="json", exclude_none=True)` produces.
 *
 * - `null`/`undefined` fields are dropped at the top level, and inside the fields Python
 *   types as models (`prompt` messages, `timeout`, `resources`, `artifacts`) at every depth;
 *   pydantic's `exclude_none` does not reach into other values, so nulls nested in extra
 *   fields (plain dicts and lists) are kept.
 * - Python `TaskData` defaults are filled in when missing: `network_allow: ["*"]`,
 *   `network_block: []`, `artifacts: []`, `timeout: {}`, `resources: {}`; each artifact
 *   gets `exclude: []` and `required: true`.
 * - `timeout.*` and `resources.{cpu,memory,disk}` are Python floats ({@link PyFloat}).
 *
 * The result is meant for {@link pythonJsonDumps}.
 */
export function canonicalTaskData(data: Record<string, unknown>): Record<string, unknown> {
  const out = dropNone(data);
  if (Array.isArray(out.prompt)) out.prompt = dumpModel(out.prompt);
  out.network_allow ??= ["*"];
  out.network_block ??= [];
  out.artifacts = Array.isArray(out.artifacts)
    ? out.artifacts.map((
      a,
    ) => (isObject(a) ? { exclude: [], required: true, ...(dumpModel(a) as object) } : a))
    : (out.artifacts ?? []);
  out.timeout = dumpFloatModel(out.timeout ?? {}, TIMEOUT_FLOATS);
  out.resources = dumpFloatModel(out.resources ?? {}, RESOURCE_FLOATS);
  return out;
}

/** The exact text Python hashes for a task: `json.dumps(<canonical data>, sort_keys=True)`. */
export function canonicalTaskJson(data: Record<string, unknown>): string {
  return pythonJsonDumps(canonicalTaskData(data));
}

/** SHA-256 (hex) of the canonical JSON of task data: the task hash (Python `Task.hash`). */
export function taskHash(data: Record<string, unknown>): string {
  return createHash("sha256").update(canonicalTaskJson(data), "utf8").digest("hex");
}
