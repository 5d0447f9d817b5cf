/**
 * Command-line flags against the narrowed schema: the ids they set (read before any
 * plugin loads), each flag's strings typed by the schema at its path (`--no-x` for a
 * boolean, JSON for lists and tables, `None` for null), and the flag layer they make,
 * merged over the files'. Every problem is collected, none stops the others.
 *
 * @module
 */
import type { z } from "zod";
import type { ConfigIssue } from "../../kit/errors.ts";
import type { ParsedArgv, RawFlag } from "./argv.ts";
import {
  getPath,
  isPlainObject,
  MAX_CONFIG_DEPTH,
  mergeConfig,
  nestingDepthExceeds,
  setPath,
} from "./merge.ts";
import {
  flagName,
  type Provenance,
  recordLeaves,
  rootAlias,
  roughPath,
  snake,
} from "./provenance.ts";
import { childSchema, fieldInfo, listLeaves, objectShape } from "./schema_walk.ts";
import { closest, editDistance } from "../../kit/util/suggest.ts";
import { quote } from "../../kit/util/quote.ts";

/** Longest value (all of one flag's values together) a flag takes. */
const MAX_FLAG_VALUE_CHARS = 1024 * 1024;

/** The config paths that hold plugin ids, and the kind each names. */
const ID_PATHS: Record<string, string> = {
  "env.taskset.id": "taskset",
  "env.agent.harness.id": "harness",
  "env.agent.runtime.type": "runtime",
  "env.id": "env",
};

/** A problem that is not about one located value. */
export function plain(message: string): ConfigIssue {
  return { path: "", message };
}

/** Reads every id the layers set; refuses the same id flag given twice with different values. */
export function collectIdFlags(
  parsed: ParsedArgv,
  problems: ConfigIssue[],
): Map<string, { value: string; flag: string }> {
  const ids = new Map<string, { value: string; flag: string }>();
  const note = (path: string, value: string, flag: string) => {
    const prev = ids.get(path);
    if (prev && prev.value !== value) {
      const extra = path === "env.taskset.id"
        ? "; the positional <taskset-id> shorthand sets it too"
        : "";
      problems.push({
        path: flag,
        message: `${path} given twice with different values (${
          quote(prev.value)
        } by ${prev.flag}, ${quote(value)})${extra}`,
      });
      return;
    }
    ids.set(path, { value, flag });
  };
  if (parsed.positional.length > 1) {
    problems.push(
      plain(`only one taskset id may be given positionally, got: ${parsed.positional.join(" ")}`),
    );
  }
  if (parsed.positional[0] !== undefined) {
    note("env.taskset.id", parsed.positional[0], "positional <taskset-id>");
  }
  for (const f of parsed.flags) {
    const p = roughPath(f.segments).join(".");
    if (!Object.hasOwn(ID_PATHS, p)) continue;
    const [id, ...more] = f.values;
    if (id === undefined || id === "" || more.length > 0) {
      problems.push(plain(`${f.text} needs an id, and none was given`));
      continue;
    }
    note(p, id, f.text);
  }
  return ids;
}

/** The direct fields of a group, as flags (sub-groups end in `.*`). */
function listGroupLeaves(schema: z.ZodType, path: string[]): string {
  const shape = objectShape(schema) ?? {};
  const names = Object.entries(shape).map(([k, v]) =>
    flagName([...path, k]) + (objectShape(v) ? ".*" : "")
  );
  const shown = names.slice(0, 12).join(", ");
  return names.length > 12 ? `${shown}, ... (${names.length} in all)` : shown;
}

/** Types one flag's string values against the schema at its path. */
function coerceFlag(
  flag: RawFlag,
  root: z.ZodType,
  problems: ConfigIssue[],
): { path: string[]; value: unknown } | null {
  const path: string[] = [];
  let schema: z.ZodType = root;
  const typed = flag.segments;
  for (const [i, given] of typed.entries()) {
    const info = fieldInfo(schema);
    let seg = given;
    if (info.kind === "object") {
      seg = snake(seg);
      if (i === 0) seg = rootAlias(seg) ?? seg;
    }
    const child = childSchema(schema, seg);
    if (!child) {
      // `--no-x` for a boolean leaf x
      if (i === typed.length - 1 && /^no[-_]/.test(given) && flag.values.length === 0) {
        const base = snake(given.slice(3));
        const target = childSchema(schema, i === 0 ? rootAlias(base) ?? base : base);
        if (target && fieldInfo(target).kind === "boolean") {
          return { path: [...path, i === 0 ? rootAlias(base) ?? base : base], value: false };
        }
      }
      if (info.kind === "object") {
        const known = listLeaves(root).map((l) => flagName(l.path));
        const typedName = flagName([...roughPath(typed)]);
        let guess = closest(typedName, known);
        // a typo is judged on the flag's last part, not the whole path it shares
        const leaf = typed[typed.length - 1] ?? "";
        if (guess && editDistance(typedName, guess) > Math.max(2, Math.floor(leaf.length / 3))) {
          guess = null;
        }
        problems.push(plain(
          `unknown flag ${quote(flag.text, { bare: true })}` +
            (guess ? ` (did you mean ${guess}?)` : "") +
            (!guess && path.length
              ? `; ${flagName(path)} has: ${listGroupLeaves(schema, path)}`
              : ""),
        ));
      } else if ((info.kind === "tuple" || info.kind === "array") && /^\d+$/.test(seg)) {
        problems.push({
          path: flag.text,
          message: `${flagName(path)} has no entry ${seg} in the config files; a flag sets ` +
            `a field of an entry they define (give the whole list as JSON to add one)`,
        });
      } else {
        problems.push({
          path: flag.text,
          message: `${flagName(path)} is not a group (it is a ${info.kind})`,
        });
      }
      return null;
    }
    path.push(seg);
    schema = child;
  }
  return coerceValue(flag, path, schema, problems);
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

function scalar(kind: string, raw: string, flag: string, problems: ConfigIssue[]): unknown {
  if (raw === "None") return null;
  switch (kind) {
    case "boolean": {
      const v = raw.toLowerCase();
      if (["true", "1", "yes"].includes(v)) return true;
      if (["false", "0", "no"].includes(v)) return false;
      problems.push({ path: flag, message: `expected true or false, got ${quote(raw)}` });
      return undefined;
    }
    case "int":
    case "number": {
      const n = Number(raw);
      if (raw.trim() === "" || Number.isNaN(n)) {
        problems.push({
          path: flag,
          message: `expected ${kind === "int" ? "an integer" : "a number"}, got ${quote(raw)}`,
        });
        return undefined;
      }
      return n;
    }
    case "string":
    case "enum":
    case "literal":
      return raw;
    default: {
      const j = parseJson(raw);
      return j.ok ? j.value : raw;
    }
  }
}

function coerceValue(
  flag: RawFlag,
  path: string[],
  schema: z.ZodType,
  problems: ConfigIssue[],
): { path: string[]; value: unknown } | null {
  const info = fieldInfo(schema);
  const vals = flag.values;
  const first = vals[0] ?? ""; // read below only where vals is not empty
  const before = problems.length;
  const size = vals.reduce((n, v) => n + v.length, 0);
  if (size > MAX_FLAG_VALUE_CHARS) {
    problems.push({
      path: flag.text,
      message: `value of ${size} characters is longer than the limit of ${MAX_FLAG_VALUE_CHARS}`,
    });
    return null;
  }
  if (info.kind === "object" && !(vals.length === 1 && first.trim().startsWith("{"))) {
    problems.push(plain(
      `${flag.text} is a config group, not a leaf field. Try one of: ${
        listGroupLeaves(schema, path)
      }`,
    ));
    return null;
  }
  if (info.kind === "boolean" && vals.length === 0) return { path, value: true };
  if (vals.length === 0) {
    problems.push(plain(`${flag.text} needs a value`));
    return null;
  }
  let value: unknown;
  if (info.kind === "array" || info.kind === "tuple") {
    if (vals.length === 1 && first.trim().startsWith("[")) {
      const j = parseJson(first);
      if (!j.ok) problems.push({ path: flag.text, message: `invalid JSON list: ${first}` });
      value = j.ok ? j.value : undefined;
    } else if (vals.length === 1 && first === "None") value = null;
    else {
      const el = childSchema(schema, "0");
      const elKind = el ? fieldInfo(el).kind : "unknown";
      value = vals.map((v) => scalar(elKind, v, flag.text, problems));
    }
  } else if (info.kind === "object" || info.kind === "record") {
    const j = parseJson(first);
    if (vals.length !== 1 || !j.ok || !isPlainObject(j.value)) {
      problems.push({ path: flag.text, message: `expected a JSON object, got ${vals.join(" ")}` });
      return null;
    }
    value = j.value;
  } else {
    if (vals.length > 1) {
      problems.push(plain(`${flag.text} takes one value, got ${vals.length}: ${vals.join(" ")}`));
      return null;
    }
    value = scalar(info.kind, first, flag.text, problems);
  }
  if (problems.length === before && nestingDepthExceeds(value, MAX_CONFIG_DEPTH)) {
    problems.push({
      path: flag.text,
      message: `value is nested more than ${MAX_CONFIG_DEPTH} levels deep`,
    });
  }
  return problems.length > before ? null : { path, value };
}

/**
 * The flag layer: every flag typed against `schema` and set at its path (list flags
 * append, JSON tables merge, `--a.list.0.field v` edits a copy of the files' list), and
 * the positional taskset id. Records where each value was set in `prov`.
 */
export function flagLayer(
  parsed: ParsedArgv,
  schema: z.ZodType,
  fileData: unknown,
  prov: Provenance,
  problems: ConfigIssue[],
): unknown {
  let flagData: unknown = {};
  for (const flag of parsed.flags) {
    const typed = coerceFlag(flag, schema, problems);
    if (!typed) continue;
    const key = typed.path.join(".");
    prov.byPath.set(key, flag.text);
    recordLeaves(prov, typed.value, typed.path, () => flag.text);
    const existing = getPath(flagData, typed.path);
    let value = typed.value;
    if (
      Array.isArray(existing) && Array.isArray(value) && !flag.values[0]?.trim().startsWith("[")
    ) {
      value = [...existing, ...value];
    }
    const next = isPlainObject(flagData) ? flagData : {};
    // `--a.list.0.field v`: the flag edits a copy of the files' list in place
    typed.path.forEach((seg, i) => {
      const list = /^\d+$/.test(seg) ? getPath(fileData, typed.path.slice(0, i)) : undefined;
      if (Array.isArray(list) && !Array.isArray(getPath(next, typed.path.slice(0, i)))) {
        setPath(next, typed.path.slice(0, i), structuredClone(list));
      }
    });
    if (isPlainObject(value) && isPlainObject(existing)) value = mergeConfig(existing, value);
    setPath(next, typed.path, value);
    flagData = next;
  }
  if (parsed.positional[0] !== undefined) {
    const next = isPlainObject(flagData) ? flagData : {};
    setPath(next, ["env", "taskset", "id"], parsed.positional[0]);
    prov.byPath.set("env.taskset.id", "positional <taskset-id>");
    flagData = next;
  }
  return flagData;
}
