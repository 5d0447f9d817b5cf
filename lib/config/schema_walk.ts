/**
 * Reading zod schemas as data: unwrapping wrappers, finding the schema at a config
 * path, listing leaves, and describing a field for help and flag coercion.
 *
 * @module
 */
import type { z } from "zod";

type Any = z.ZodType;
// deno-lint-ignore no-explicit-any
type Def = any;

function def(s: Any): Def {
  return (s as unknown as { _zod: { def: Def } })._zod.def;
}

/** What a schema looks like once optional/nullable/default wrappers are peeled. */
export interface FieldInfo {
  /** The core schema. */
  core: Any;
  /** Core kind: string, number, int, boolean, object, record, array, tuple, enum, literal, union, unknown. */
  kind: string;
  nullable: boolean;
  hasDefault: boolean;
  defaultValue: unknown;
  description: string | undefined;
}

/** Peels optional, nullable, default, prefault, catch, readonly and pipe wrappers. */
export function fieldInfo(schema: Any): FieldInfo {
  let s = schema;
  let nullable = false;
  let hasDefault = false;
  let defaultValue: unknown = undefined;
  let description: string | undefined = (s as { description?: string }).description;
  for (let i = 0; i < 20; i++) {
    const d = def(s);
    const t = d.type as string;
    if (t === "optional" || t === "readonly" || t === "catch") s = d.innerType;
    else if (t === "nullable") {
      nullable = true;
      s = d.innerType;
    } else if (t === "default" || t === "prefault") {
      if (!hasDefault) {
        hasDefault = true;
        const v = d.defaultValue;
        defaultValue = typeof v === "function" ? v() : v;
      }
      s = d.innerType;
    } else if (t === "pipe") s = d.in;
    else break;
    description ??= (s as { description?: string }).description;
  }
  const d = def(s);
  let kind = d.type as string;
  if (kind === "number") {
    const checks: Def[] = d.checks ?? [];
    const isInt = (f: unknown) => typeof f === "string" && /int/.test(f);
    if (isInt(d.format) || checks.some((c) => isInt(c?._zod?.def?.format))) kind = "int";
  }
  if (kind === "union") {
    const opts = (d.options as Any[]).map((o) => fieldInfo(o));
    const nonNull = opts.filter((o) => o.kind !== "null");
    if (opts.some((o) => o.kind === "null")) nullable = true;
    const [only, ...others] = nonNull;
    if (only && others.length === 0) {
      return { ...only, nullable, hasDefault, defaultValue, description };
    }
  }
  return { core: s, kind, nullable, hasDefault, defaultValue, description };
}

/** The fields of an object schema (after unwrapping), or null when it is not one. */
export function objectShape(schema: Any): Record<string, Any> | null {
  const info = fieldInfo(schema);
  if (info.kind !== "object") return null;
  return def(info.core).shape as Record<string, Any>;
}

/** The schema of values of a record, the catchall of an object, or the element of an array. */
export function childSchema(schema: Any, key: string): Any | null {
  const info = fieldInfo(schema);
  const d = def(info.core);
  if (info.kind === "object") {
    const shape = d.shape as Record<string, Any>;
    if (Object.hasOwn(shape, key)) return shape[key] ?? null;
    if (d.catchall && def(d.catchall).type !== "never") return d.catchall;
    return null;
  }
  if (info.kind === "record") return d.valueType;
  if (info.kind === "array" && /^\d+$/.test(key)) return d.element;
  if (info.kind === "tuple" && /^\d+$/.test(key)) {
    return (d.items as Any[])[Number(key)] ?? d.rest ?? null;
  }
  return null;
}

/** The allowed values of an enum or literal schema. */
function enumValues(schema: Any): unknown[] | null {
  const info = fieldInfo(schema);
  const d = def(info.core);
  if (info.kind === "enum") return Object.values(d.entries as Record<string, unknown>);
  if (info.kind === "literal") return [...(d.values as unknown[])];
  return null;
}

/** Element schema of an array field. */
function arrayElement(schema: Any): Any | null {
  const info = fieldInfo(schema);
  return info.kind === "array" ? def(info.core).element : null;
}

/** A leaf of a config tree: its dotted path and schema. */
export interface Leaf {
  path: string[];
  schema: Any;
}

/** Lists the leaf fields under an object schema (objects are descended, everything else is a leaf). */
export function listLeaves(schema: Any, prefix: string[] = []): Leaf[] {
  const shape = objectShape(schema);
  if (!shape) return [{ path: prefix, schema }];
  const out: Leaf[] = [];
  for (const [k, v] of Object.entries(shape)) {
    if (objectShape(v)) out.push(...listLeaves(v, [...prefix, k]));
    else out.push({ path: [...prefix, k], schema: v });
  }
  return out;
}

/** A short type label for help: `int`, `string | null`, `"a" | "b"`, `list[string]`, ... */
export function typeLabel(schema: Any): string {
  const info = fieldInfo(schema);
  let label: string;
  const values = enumValues(schema);
  if (values) label = values.map((v) => JSON.stringify(v)).join(" | ");
  else if (info.kind === "array") {
    const el = arrayElement(schema);
    label = `list[${el ? typeLabel(el) : "any"}]`;
  } else if (info.kind === "record") label = "dict";
  else if (info.kind === "object") label = "group";
  else if (info.kind === "union") {
    label = (def(info.core).options as Any[]).map((o) => typeLabel(o)).join(" | ");
  } else label = info.kind;
  return info.nullable ? `${label} | null` : label;
}
