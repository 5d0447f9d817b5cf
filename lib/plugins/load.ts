/**
 * Loading a plugin by id: the built-in map first, then the id as an external module
 * specifier, then the export rule. A candidate that is absent is "not found" (listing
 * the built-ins of the kind); a candidate that exists but fails to import surfaces its
 * real error, naming the plugin.
 *
 * @module
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { closest } from "../../kit/util/suggest.ts";
import { errorMessage, PluginError } from "../../kit/errors.ts";
import { isCompiled } from "../../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../../kit/_runtime/runtime_name.ts";
import { builtinCatalog, builtinIds } from "./builtin_catalog.ts";
import { importModule } from "./import_module.ts";
import {
  isPlugin,
  type Plugin,
  PLUGIN_KINDS,
  type PluginKind,
  type PluginOf,
} from "../../kit/contract.ts";
import { barePackageName, mayBeBuiltin, normalizeId, specifierKind } from "./specifier.ts";
import type { PluginLock } from "./lock.ts";
import { entryProblem, missingDependency } from "./fetch/entry.ts";
import { RemoteNotFound } from "./fetch/fetch_errors.ts";
import type { FetchOptions } from "./fetch/resolve.ts";
import { quote } from "../../kit/util/quote.ts";

/** Options of {@link loadPlugin}. */
export interface LoadPluginOptions {
  /** Base directory for relative paths and bare packages. @default process.cwd() */
  cwd?: string;
  /** The launch's `vf.lock`: fetched specifiers resolve through it (see lock.ts). */
  lock?: PluginLock | undefined;
  /** Resolver settings for `http(s):`, `npm:` and `jsr:` specifiers (registries, cache). */
  fetch?: Omit<FetchOptions, "cwd" | "lock">;
}

/** A plugin module after import: where it came from and what it exports. */
export interface LoadedModule {
  /** The specifier that was imported (a file URL for paths). */
  target: string;
  builtin: boolean;
  exports: Record<string, unknown>;
  /** For a fetched specifier: the exact thing loaded (`npm:<name>@<version>` or the URL). */
  resolved?: string;
}

const moduleCache = new Map<string, Promise<LoadedModule>>();
const lockKeys = new WeakMap<PluginLock, number>();
let lockCount = 0;

/** A cache key part per lock object: a launch with its own lock resolves through it. */
function lockKey(lock: PluginLock | undefined): string {
  if (!lock) return "";
  let k = lockKeys.get(lock);
  if (k === undefined) lockKeys.set(lock, k = ++lockCount);
  return String(k);
}

/** The `where` of {@link notFound} for a path or URL that holds no module. */
function noModuleAt(pathOrUrl: string): string {
  return `no module was found at ${quote(pathOrUrl)}`;
}

/** "not found": `where` says what was looked for ({@link noModuleAt} for a path or URL). */
function notFound(kind: PluginKind, id: string, where: string): PluginError {
  const ids = builtinIds(kind);
  const guess = closest(id, ids);
  return new PluginError(
    "plugin_not_found",
    `Cannot find ${kind} ${quote(id)}: no built-in has that id and ${where}` +
      (guess ? ` (did you mean "${guess}"?)` : ""),
    {
      hint:
        `Built-in ${kind} ids: ${ids.join(", ")}. Otherwise give a path, a file: or https: URL, ` +
        `an npm: or jsr: specifier, or an installed package name.` +
        (kind === "harness" && normalizeId(id) === "default"
          ? ' The "default" harness is called "bash".'
          : ""),
    },
  );
}

function importFailed(kind: PluginKind, id: string, err: unknown): PluginError {
  return new PluginError(
    "plugin_import_failed",
    `Cannot load ${kind} ${quote(id)}: importing it failed: ${errorMessage(err)}`,
    {
      hint:
        "The plugin was found; the error above is its own (a syntax error, a missing dependency " +
        "of the plugin, or a throw at top level)",
      cause: err,
    },
  );
}

function findPackageDir(name: string, from: string): string | null {
  for (let dir = resolve(from);; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name, "package.json");
    if (existsSync(candidate)) return dirname(candidate);
    if (dirname(dir) === dir) return null;
  }
}

function pickExport(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "object" && value !== null) {
    const v = value as Record<string, unknown>;
    for (const k of ["deno", "bun", "import", "module", "default", "node"]) {
      const hit = pickExport(v[k]);
      if (hit) return hit;
    }
  }
  return null;
}

/** The file a package (or `pkg/sub`) resolves to, from `exports`, `module`, `main` or index files. */
function packageEntry(dir: string, subpath: string): string | null {
  let meta: Record<string, unknown> = {};
  try {
    meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
  } catch {
    return null;
  }
  const key = subpath ? `.${subpath}` : ".";
  const exp = meta.exports;
  let rel: string | null = null;
  if (exp !== undefined) {
    const table = typeof exp === "object" && exp !== null && Object.keys(exp).some((k) =>
        k.startsWith(".")
      )
      ? (exp as Record<string, unknown>)[key]
      : key === "."
      ? exp
      : undefined;
    rel = pickExport(table);
  }
  if (!rel && !subpath) rel = pickExport(meta.module) ?? pickExport(meta.main);
  const candidates = rel
    ? [join(dir, rel)]
    : subpath
    ? [join(dir, subpath), ...["ts", "js", "mjs"].map((e) => join(dir, `${subpath}.${e}`))]
    : ["mod.ts", "index.ts", "index.js", "index.mjs"].map((f) => join(dir, f));
  return candidates.find((c) => existsSync(c) && statSync(c).isFile()) ?? null;
}

async function importExternal(
  kind: PluginKind,
  id: string,
  cwd: string,
  options: LoadPluginOptions,
): Promise<LoadedModule> {
  const sk = specifierKind(id);
  const host = runtimeName();
  let target = id;
  if (sk === "path") {
    const abs = isAbsolute(id) ? id : resolve(cwd, id);
    let file = abs;
    if (existsSync(abs) && statSync(abs).isDirectory()) file = join(abs, "mod.ts");
    if (!existsSync(file)) {
      throw notFound(kind, id, noModuleAt(abs));
    }
    target = pathToFileURL(file).href;
  } else if (sk === "file-url") {
    const path = new URL(id).pathname;
    if (!existsSync(decodeURIComponent(path))) {
      throw notFound(kind, id, noModuleAt(id));
    }
  } else if (sk === "bare") {
    if (isCompiled()) {
      throw new PluginError(
        "plugin_unsupported_specifier",
        `Cannot load ${kind} ${quote(id)}: a single-file binary cannot import installed packages`,
        { hint: `Use a path to the plugin's bundled file, or an npm:, jsr: or https: specifier` },
      );
    }
    const pkg = barePackageName(id);
    const dir = findPackageDir(pkg, cwd);
    if (!dir) {
      throw notFound(kind, id, `no installed package ${quote(pkg)} was found from ${cwd} upwards`);
    }
    const entry = packageEntry(dir, id.slice(pkg.length));
    if (!entry) {
      const problem = entryProblem(dir, id.slice(pkg.length));
      throw new PluginError(
        "plugin_package_invalid",
        `Cannot load ${kind} ${quote(id)}: the installed package at ${dir} is broken: ` +
          (problem ?? `it has no entry point for ${quote(id)}`),
        {
          hint: problem?.includes("not in the package")
            ? "Build the package (its build output is missing) or reinstall it"
            : "Fix or reinstall the package",
        },
      );
    }
    target = pathToFileURL(entry).href;
  } else if (sk === "http-url" || sk === "npm" || sk === "jsr") {
    const fetchOptions: FetchOptions = { ...options.fetch, cwd, lock: options.lock };
    // the resolver (registries, tarballs, node:zlib) is loaded only for remote specifiers
    const { registryOverridden } = await import("./fetch/resolve.ts");
    // Under `deno run` the native import comes first, unless a lock or a registry of the
    // user's own is in effect; a failed native npm:/jsr: import (e.g. in nodeModulesDir
    // "manual" mode) falls back to the resolver.
    const nativeFirst = host === "deno" && !isCompiled() && !options.lock &&
      !registryOverridden(id, fetchOptions);
    if (!nativeFirst) return await importFetched(kind, id, fetchOptions);
    if (sk !== "http-url") {
      try {
        const exports = await importModule(id);
        return { target, builtin: false, exports };
      } catch {
        return await importFetched(kind, id, fetchOptions);
      }
    }
  }
  try {
    const exports = await importModule(target);
    return { target, builtin: false, exports };
  } catch (err) {
    if (sk === "http-url" && await urlIsMissing(id)) {
      throw notFound(kind, id, noModuleAt(id));
    }
    throw importFailed(kind, id, err);
  }
}

/** Fetches the module of a URL/npm/jsr specifier with the resolver, then imports it. */
async function importFetched(
  kind: PluginKind,
  id: string,
  options: FetchOptions,
): Promise<LoadedModule> {
  let fetched;
  try {
    const { fetchPlugin } = await import("./fetch/resolve.ts");
    fetched = await fetchPlugin(id, options);
  } catch (err) {
    if (err instanceof RemoteNotFound) throw notFound(kind, id, `there is no ${err.target}`);
    if (err instanceof PluginError) {
      throw new PluginError(err.code, `Cannot load ${kind} ${quote(id)}: ${err.message}`, {
        hint: err.hint,
        cause: err,
      });
    }
    throw err;
  }
  try {
    const exports = await importModule(fetched.importTarget);
    return { target: fetched.importTarget, builtin: false, exports, resolved: fetched.resolved };
  } catch (err) {
    const dep = missingDependency(fetched.file, errorMessage(err), fetched.singleFile);
    if (!dep) throw importFailed(kind, id, err);
    throw new PluginError(
      "plugin_import_failed",
      `Cannot load ${kind} ${
        quote(id)
      }: its own dependency "${dep}" is missing (${fetched.resolved}): ${errorMessage(err)}`,
      {
        hint: "verifiers-ts does not install a fetched plugin's dependencies: bundle the plugin " +
          "into one self-contained ESM file (see docs/plugins.md)",
        cause: err,
      },
    );
  }
}

async function urlIsMissing(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    await res.body?.cancel();
    return res.status === 404 || res.status === 410;
  } catch {
    return false;
  }
}

/**
 * Imports the module behind an id: the built-in of that normalized id when there is one,
 * otherwise the external module. Cached per (kind, id, cwd).
 */
export function importPluginModule(
  kind: PluginKind,
  id: string,
  options: LoadPluginOptions = {},
): Promise<LoadedModule> {
  const cwd = options.cwd ?? process.cwd();
  const key = `${kind}\0${id}\0${cwd}\0${lockKey(options.lock)}\0${
    JSON.stringify(options.fetch ?? {})
  }`;
  let p = moduleCache.get(key);
  if (!p) {
    p = (async () => {
      if (mayBeBuiltin(id)) {
        const importer = builtinCatalog().modules[kind][normalizeId(id)];
        if (importer) {
          return {
            target: `builtin:${kind}/${normalizeId(id)}`,
            builtin: true,
            exports: await importer(),
          };
        }
      }
      return await importExternal(kind, id, cwd, options);
    })();
    moduleCache.set(key, p);
    p.catch(() => moduleCache.delete(key));
  }
  return p;
}

/**
 * Applies the export rule: among the module's exports (default and named), exactly
 * one plugin of `kind`. Three distinct errors: no plugin at all, none of this kind,
 * several of this kind.
 */
export function pickPlugin<K extends PluginKind>(
  kind: K,
  id: string,
  exports: Record<string, unknown>,
): PluginOf<K> {
  const seen = new Map<Plugin, string[]>();
  for (const name of Object.keys(exports).sort()) {
    const value = exports[name];
    if (!isPlugin(value)) continue;
    const names = seen.get(value) ?? [];
    names.push(name);
    seen.set(value, names);
  }
  const all = [...seen.entries()];
  if (all.length === 0) {
    const names = Object.keys(exports).sort();
    const abiMismatch = Object.values(exports).some((v) =>
      typeof v === "object" && v !== null && "kind" in v && "abi" in v &&
      (v as { abi: unknown }).abi !== 1
    );
    throw new PluginError(
      "plugin_no_exports",
      `Cannot load ${kind} ${quote(id)}: the module exports no plugin (it exports: ${
        names.length ? names.join(", ") : "nothing"
      })`,
      {
        hint: abiMismatch
          ? "An export has a plugin ABI this verifiers-ts does not speak (expected abi: 1)"
          : `Export the object made by define${kind.charAt(0).toUpperCase()}${
            kind.slice(1)
          }(...) (default or named)`,
      },
    );
  }
  const ofKind = all.filter(([p]) => p.kind === kind);
  const [only, ...others] = ofKind;
  if (only === undefined) {
    const has = all.map(([p, names]) => `${p.kind} "${p.id}" (${names.join(", ")})`).join(", ");
    throw new PluginError(
      "plugin_wrong_kind",
      `Cannot load ${kind} ${quote(id)}: the module exports no ${kind} plugin; it has ${has}`,
      {
        hint: `Use it where a ${
          all.map(([p]) => p.kind).join(" or ")
        } is expected, or export a ${kind}`,
      },
    );
  }
  if (others.length > 0) {
    const list = ofKind.map(([p, names]) => `"${p.id}" (${names.join(", ")})`).join(", ");
    throw new PluginError(
      "plugin_ambiguous",
      `Cannot load ${kind} ${
        quote(id)
      }: the module exports ${ofKind.length} ${kind} plugins: ${list}`,
      { hint: `A module may export one plugin of each kind; split them into separate modules` },
    );
  }
  return only[0] as PluginOf<K>;
}

/** Resolves an id or specifier to the plugin of `kind` it names. */
export async function loadPlugin<K extends PluginKind>(
  kind: K,
  id: string,
  options: LoadPluginOptions = {},
): Promise<PluginOf<K>> {
  if (!id) {
    throw new PluginError("plugin_id_missing", `Cannot load ${kind}: no id was given`, {
      hint: `Built-in ${kind} ids: ${builtinIds(kind).join(", ")}`,
    });
  }
  const mod = await importPluginModule(kind, id, options);
  return pickPlugin(kind, id, mod.exports);
}

/** Loads every built-in plugin of every kind (for `vf plugins list`). */
export async function loadBuiltins(): Promise<Plugin[]> {
  const out: Plugin[] = [];
  for (const kind of PLUGIN_KINDS) {
    for (const id of builtinIds(kind)) out.push(await loadPlugin(kind, id));
  }
  return out;
}
