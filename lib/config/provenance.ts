/**
 * Where each config value came from: every leaf a file or flag set is recorded under its
 * dotted config path, so a problem names the flag (`--env.agent.max-turns`) or the file
 * and TOML path (`eval.toml: env.agent.max_turns`) the user wrote. Also the path spelling
 * shared by flags and files: root aliases (`m` -> `model`) and kebab -> snake segments.
 *
 * @module
 */
import type { ConfigIssue } from "../../kit/errors.ts";
import { ROOT_ALIASES } from "./eval_config.ts";
import { isPlainObject, type Json, setOwn } from "./merge.ts";

/** Flag spelling of a config path: `env.agent.max_turns` -> `--env.agent.max-turns`. */
export function flagName(path: readonly string[]): string {
  return "--" + path.map((p) => p.replaceAll("_", "-")).join(".");
}

/** The root alias of a key (`m` -> `model`), own entries only (`toString` is no alias). */
export function rootAlias(key: string): string | undefined {
  return Object.hasOwn(ROOT_ALIASES, key) ? ROOT_ALIASES[key] : undefined;
}

/** A flag segment in config spelling (`max-turns` -> `max_turns`). */
export function snake(seg: string): string {
  return seg.replaceAll("-", "_");
}

/** Normalizes typed flag segments without a schema (root alias, kebab -> snake). */
export function roughPath(segments: readonly string[]): string[] {
  const [head, ...rest] = segments.map(snake);
  return head === undefined ? [] : [rootAlias(head) ?? head, ...rest];
}

/** A file's root keys with their aliases resolved (`m = "x"` -> `model = "x"`). */
export function applyRootAliases(data: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(data)) setOwn(out, rootAlias(k) ?? k, v);
  return out;
}

/** Where each value was set. */
export interface Provenance {
  /** Dotted config path -> where it was set (`--flag` or `file: toml.path`). */
  byPath: Map<string, string>;
}

/** Records `value` and every leaf below it as set at `label(path)`. */
export function recordLeaves(
  prov: Provenance,
  value: unknown,
  path: string[],
  label: (p: string[]) => string,
) {
  prov.byPath.set(path.join("."), label(path));
  if (isPlainObject(value)) {
    for (const [k, v] of Object.entries(value)) recordLeaves(prov, v, [...path, k], label);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => recordLeaves(prov, v, [...path, String(i)], label));
  }
}

/** Where the value at `path` was set: its flag or `file: toml.path`, else the dotted path. */
export function where(prov: Provenance, path: readonly (string | number)[]): string {
  const parts = path.map(String);
  for (let n = parts.length; n > 0; n--) {
    const hit = prov.byPath.get(parts.slice(0, n).join("."));
    if (!hit) continue;
    const rest = parts.slice(n);
    if (hit.startsWith("-")) return rest.length ? `${hit} (at ${parts.join(".")})` : hit;
    return rest.length ? `${hit}.${rest.join(".")}` : hit;
  }
  return parts.length ? parts.join(".") : "config";
}

/** A problem at `path`, located by where its value was set. */
export function issueAt(
  prov: Provenance,
  path: readonly (string | number)[],
  message: string,
  hint?: string,
): ConfigIssue {
  const issue: ConfigIssue = { path: where(prov, path), message };
  if (hint !== undefined) issue.hint = hint;
  return issue;
}
