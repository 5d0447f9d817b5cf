/**
 * From a fetched package or file to something `import()` accepts: the package's plugin
 * entry (the `./plugin` export when there is one — the self-contained bundle — else the
 * `.` export, `module`, `main` or an index file), the import target (a file URL, or a
 * `data:` URL on hosts that only accept that), and, when an import fails, which of the
 * module's own dependencies was missing.
 *
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { errorMessage } from "../../../kit/errors.ts";
import { isCompiled } from "../../../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../../../kit/_runtime/runtime_name.ts";

/** How a fetched module is handed to `import()`. */
export type ImportMode = "file" | "data";

function pickTarget(value: unknown, conditions: readonly string[]): string | null {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) {
    for (const v of value) {
      const hit = pickTarget(v, conditions);
      if (hit) return hit;
    }
    return null;
  }
  if (typeof value === "object" && value !== null) {
    const v = value as Record<string, unknown>;
    for (const k of conditions) {
      if (!(k in v)) continue;
      const hit = pickTarget(v[k], conditions);
      if (hit) return hit;
    }
  }
  return null;
}

function exportTarget(exp: unknown, key: string, conditions: readonly string[]): string | null {
  if (exp === undefined || exp === null) return null;
  const isMap = typeof exp === "object" && !Array.isArray(exp) &&
    Object.keys(exp as object).some((k) => k.startsWith("."));
  if (!isMap) return key === "." ? pickTarget(exp, conditions) : null;
  const table = exp as Record<string, unknown>;
  if (key in table) return pickTarget(table[key], conditions);
  for (const [pattern, value] of Object.entries(table)) {
    const star = pattern.indexOf("*");
    if (star < 0) continue;
    const [pre, post] = [pattern.slice(0, star), pattern.slice(star + 1)];
    if (key.startsWith(pre) && key.endsWith(post) && key.length >= pre.length + post.length) {
      const hit = pickTarget(value, conditions);
      if (hit) return hit.replaceAll("*", key.slice(pre.length, key.length - post.length));
    }
  }
  return null;
}

/**
 * What {@link packageEntry} and {@link entryProblem} look for: the export conditions this
 * runtime matches, and the export keys for a subpath (none: `./plugin`, then `.`).
 */
function entryLookup(subpath: string): { conditions: string[]; keys: string[] } {
  return {
    conditions: [runtimeName(), "import", "module", "default", "node"],
    keys: subpath ? [`.${subpath}`] : ["./plugin", "."],
  };
}

/**
 * The entry file of an extracted package for an optional subpath (`""` or `/sub`):
 * with no subpath the `./plugin` export first, then `.`; then `module`, `main`, index
 * files. Null when there is none (or it would leave the package directory).
 */
export function packageEntry(dir: string, subpath: string): string | null {
  let meta: Record<string, unknown> = {};
  const pj = join(dir, "package.json");
  if (existsSync(pj)) {
    try {
      meta = JSON.parse(readFileSync(pj, "utf8"));
    } catch {
      return null; // a broken package.json: see entryProblem
    }
    if (typeof meta !== "object" || meta === null || Array.isArray(meta)) return null;
  }
  const { conditions, keys } = entryLookup(subpath);
  let rel: string | null = null;
  for (const key of keys) {
    rel = exportTarget(meta.exports, key, conditions);
    if (rel) break;
  }
  if (!rel && meta.exports === undefined && !subpath) {
    rel = pickTarget(meta.module, conditions) ?? pickTarget(meta.main, conditions);
  }
  const root = resolve(dir);
  const inside = (p: string) => {
    const abs = resolve(root, p);
    return abs.startsWith(root + sep) && existsSync(abs) && statSync(abs).isFile() ? abs : null;
  };
  if (rel) {
    return inside(rel) ?? inside(`${rel}.js`) ?? null;
  }
  if (meta.exports !== undefined) return null;
  const base = subpath ? subpath.slice(1) : "index";
  const names = subpath
    ? [base, ...["js", "mjs", "ts"].map((e) => `${base}.${e}`), `${base}/index.js`]
    : ["index.js", "index.mjs", "mod.js", "mod.ts", "index.ts"];
  for (const n of names) {
    const hit = inside(n);
    if (hit) return hit;
  }
  return null;
}

/**
 * Why a package directory has no usable entry: its `package.json` is missing or not
 * valid JSON, or its `exports`/`module`/`main` names a file the package does not hold
 * (typically a build output that was not built before publishing). Null when nothing
 * specific is wrong.
 */
export function entryProblem(dir: string, subpath: string): string | null {
  let text: string;
  try {
    text = readFileSync(join(dir, "package.json"), "utf8");
  } catch {
    return "it has no package.json";
  }
  let meta: Record<string, unknown>;
  try {
    const parsed = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      return "its package.json is not a JSON object";
    }
    meta = parsed;
  } catch (err) {
    return `its package.json is not valid JSON (${errorMessage(err)})`;
  }
  const { conditions, keys } = entryLookup(subpath);
  for (const key of keys) {
    const rel = exportTarget(meta.exports, key, conditions);
    if (rel) return `its exports map ${key} to ${rel}, which is not in the package`;
  }
  if (meta.exports === undefined && !subpath) {
    for (const field of ["module", "main"]) {
      const rel = pickTarget(meta[field], conditions);
      if (rel) return `its "${field}" is ${rel}, which is not in the package`;
    }
  }
  return null;
}

function mimeOf(file: string): string {
  if (/\.(m|c)?tsx?$/.test(file)) return "application/typescript";
  return "text/javascript";
}

/** The import mode this host needs: `data` inside a `deno compile` binary, else `file`. */
export function defaultImportMode(): ImportMode {
  return runtimeName() === "deno" && isCompiled() ? "data" : "file";
}

function base64(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    out += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(out);
}

/** What to pass to `import()` for a fetched file: its file URL, or a `data:` URL. */
export function importTarget(file: string, mode: ImportMode): string {
  if (mode === "file") return pathToFileURL(file).href;
  return `data:${mimeOf(file)};base64,${base64(new Uint8Array(readFileSync(file)))}`;
}

const NODE_BUILTINS = new Set([
  "assert",
  "buffer",
  "child_process",
  "crypto",
  "events",
  "fs",
  "http",
  "https",
  "module",
  "net",
  "os",
  "path",
  "process",
  "stream",
  "string_decoder",
  "timers",
  "tty",
  "url",
  "util",
  "worker_threads",
  "zlib",
]);

/**
 * The modules a source file imports that a fetched plugin cannot count on: bare package
 * names (and `npm:`/`jsr:` specifiers), in order of appearance. Relative imports are
 * included for single fetched files (`relative`), which travel alone.
 */
export function foreignImports(source: string, relative: boolean): string[] {
  const out: string[] = [];
  const re =
    /(?:\bimport\s*(?:[\w*{}\s,$]+\s*from\s*)?|\bexport\s*[\w*{}\s,$]*\s*from\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)(["'])([^"'\n]+)\1/g;
  for (const m of source.matchAll(re)) {
    const spec = m[2]!; // the regex's required group
    if (/^(node:|data:|https?:|file:)/.test(spec)) continue;
    if (spec.startsWith(".") || spec.startsWith("/")) {
      if (relative && !out.includes(spec)) out.push(spec);
      continue;
    }
    const root = spec.replace(/^(npm|jsr):\/?/, "").split("/").slice(
      0,
      spec.startsWith("@") ? 2 : 1,
    )
      .join("/");
    if (NODE_BUILTINS.has(root) || NODE_BUILTINS.has(spec)) continue;
    if (!out.includes(spec)) out.push(spec);
  }
  return out;
}

/**
 * When importing a fetched module failed because one of its own dependencies is not
 * there, names it: the first foreign import the error text mentions, or the only one
 * when the error is a resolution failure. Null otherwise.
 */
export function missingDependency(file: string, error: string, relative: boolean): string | null {
  let source = "";
  try {
    source = readFileSync(file, "utf8");
  } catch {
    return null;
  }
  const foreign = foreignImports(source, relative);
  const mentioned = foreign.find((s) => error.includes(`"${s}"`) || error.includes(`'${s}'`)) ??
    foreign.find((s) => s.length >= 3 && error.includes(s));
  if (mentioned) return mentioned;
  const resolution =
    /cannot find|could not (find|resolve)|not found|not a dependency|unable to resolve|module not found|relative import path/i;
  return resolution.test(error) ? foreign[0] ?? null : null;
}
