/**
 * Parsing `npm:name[@range][/sub]` and `jsr:@scope/name[@range][/sub]` specifiers into
 * the npm package to fetch. A JSR package is fetched from JSR's npm-compatible registry
 * under the name `@jsr/<scope>__<name>`.
 *
 * @module
 */
import { PluginError } from "../../../kit/errors.ts";
import { parseRange } from "./semver.ts";
import { quote } from "../../../kit/util/quote.ts";

/** A package specifier, ready for the registry. */
export interface PackageSpec {
  /** Which registry family: npm, or JSR through its npm-compatible endpoint. */
  source: "npm" | "jsr";
  /** The npm package name to ask the registry for (`@jsr/scope__name` for JSR). */
  name: string;
  /** The name as the user wrote it (`@scope/name` for JSR). */
  displayName: string;
  /** A semver range or a dist-tag; empty = the `latest` tag. */
  range: string;
  /** `""` or `/sub/path` inside the package. */
  subpath: string;
}

const NPM_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;
const JSR_PART = /^[a-z0-9][a-z0-9-]*$/;
const TAG = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function invalid(id: string, why: string, hint: string): PluginError {
  return new PluginError("plugin_specifier_invalid", `invalid specifier ${quote(id)}: ${why}`, {
    hint,
  });
}

/** True when a range part is a semver range rather than a dist-tag. */
export function isSemverRange(range: string): boolean {
  return range === "" || parseRange(range) !== null;
}

/** Parses an `npm:` or `jsr:` specifier. Throws {@link PluginError} when malformed. */
export function parsePackageSpec(id: string): PackageSpec {
  const source = id.startsWith("npm:") ? "npm" : id.startsWith("jsr:") ? "jsr" : null;
  if (!source) throw invalid(id, "expected npm: or jsr:", "npm:name[@range], jsr:@scope/name");
  let rest = id.slice(4).replace(/^\/+/, "");
  let name: string;
  if (rest.startsWith("@")) {
    const slash = rest.indexOf("/");
    if (slash < 0) throw invalid(id, "a scoped name needs /<name>", "npm:@scope/name@^1");
    const end = rest.slice(slash + 1).search(/[@/]/);
    name = end < 0 ? rest : rest.slice(0, slash + 1 + end);
  } else {
    const end = rest.search(/[@/]/);
    name = end < 0 ? rest : rest.slice(0, end);
  }
  rest = rest.slice(name.length);
  let range = "";
  if (rest.startsWith("@")) {
    const slash = rest.indexOf("/");
    range = decodeURIComponent(slash < 0 ? rest.slice(1) : rest.slice(1, slash));
    rest = slash < 0 ? "" : rest.slice(slash);
  }
  const subpath = rest === "/" ? "" : rest;
  if (subpath.split("/").some((p) => p === "..")) {
    throw invalid(id, "the subpath may not contain ..", "npm:name@1/sub/path");
  }
  if (range !== "" && !isSemverRange(range) && !TAG.test(range)) {
    throw invalid(id, `${quote(range)} is neither a semver range nor a dist-tag`, "npm:name@^1.2");
  }
  if (source === "npm") {
    if (!NPM_NAME.test(name)) {
      throw invalid(id, `${quote(name)} is not a valid npm package name`, "npm:@scope/name@^1.2");
    }
    return { source, name, displayName: name, range: range.trim(), subpath };
  }
  const [, scope, base] = /^@([^/]+)\/([^/]+)$/.exec(name) ?? [];
  if (scope === undefined || base === undefined || !JSR_PART.test(scope) || !JSR_PART.test(base)) {
    throw invalid(id, `${quote(name)} is not a JSR package name`, "jsr:@scope/name@^1.2");
  }
  return {
    source,
    name: `@jsr/${scope}__${base}`,
    displayName: name,
    range: range.trim(),
    subpath,
  };
}

/** The registry URL path of a package document (`@scope/name` -> `@scope%2fname`). */
export function packumentPath(name: string): string {
  return name.startsWith("@") ? name.replace("/", "%2f") : name;
}
