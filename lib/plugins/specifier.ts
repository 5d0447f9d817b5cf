/**
 * Plugin ids and specifiers: normalization of built-in ids and classification of
 * external specifiers.
 *
 * @module
 */

/** How an external plugin specifier is located. */
export type SpecifierKind = "path" | "file-url" | "http-url" | "npm" | "jsr" | "data-url" | "bare";

/**
 * Normalizes an id for built-in lookup: keep what follows the last `/`, cut at the
 * first `@`, lowercase, `_` and `-` equivalent (`acme/Reverse_Text@1.2` -> `reverse-text`).
 */
export function normalizeId(id: string): string {
  const afterSlash = id.slice(id.lastIndexOf("/") + 1);
  const at = afterSlash.indexOf("@");
  const name = at >= 0 ? afterSlash.slice(0, at) : afterSlash;
  return name.toLowerCase().replaceAll("_", "-");
}

/** Classifies an id: a relative or absolute path, a URL, an `npm:`/`jsr:` specifier or a bare name. */
export function specifierKind(id: string): SpecifierKind {
  if (
    id.startsWith("./") || id.startsWith("../") || id.startsWith("/") || id === "." || id === ".."
  ) {
    return "path";
  }
  if (/^[a-zA-Z]:[\\/]/.test(id)) return "path";
  if (/\.(m?[jt]s|tsx?|jsx)$/.test(id) && !id.includes(":")) return "path";
  if (id.startsWith("file:")) return "file-url";
  if (id.startsWith("http://") || id.startsWith("https://")) return "http-url";
  if (id.startsWith("npm:")) return "npm";
  if (id.startsWith("jsr:")) return "jsr";
  if (id.startsWith("data:")) return "data-url";
  return "bare";
}

/**
 * True when an id may name a built-in: bare names and hub-style `owner/name@version`
 * ids. Paths, URLs and `npm:`/`jsr:` specifiers always mean the external module.
 */
export function mayBeBuiltin(id: string): boolean {
  return specifierKind(id) === "bare";
}

/** The package name of a bare specifier (`@scope/pkg/sub` -> `@scope/pkg`, `pkg/sub` -> `pkg`). */
export function barePackageName(id: string): string {
  const parts = id.split("/");
  return parts.slice(0, id.startsWith("@") ? 2 : 1).join("/");
}
