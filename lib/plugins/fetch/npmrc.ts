/**
 * Where npm and JSR packages are fetched from, honouring the user's npm settings:
 * `VF_NPM_REGISTRY` / `VF_JSR_REGISTRY` first, then `NPM_CONFIG_REGISTRY` /
 * `npm_config_registry`, then the nearest project `.npmrc` and the user's `~/.npmrc`
 * (`registry=`, `@scope:registry=`, `@jsr:registry=`, and `//host/path/:_authToken=` /
 * `:_auth=` credentials, with `${VAR}` expansion).
 *
 * @module
 */
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { getEnv } from "../../../kit/_runtime/env.ts";

/** The public npm registry. */
const DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org/";

/** JSR's npm-compatible registry (packages named `@jsr/<scope>__<name>`). */
const DEFAULT_JSR_REGISTRY = "https://npm.jsr.io/";

/** Resolved registry settings. */
export interface RegistrySettings {
  /** Default npm registry base URL (ends in `/`). */
  registry: string;
  /** Registries of npm scopes (`@acme` -> URL ending in `/`). */
  scopes: Record<string, string>;
  /** The JSR npm-compatible base URL (ends in `/`). */
  jsrRegistry: string;
  /** Credentials by `//host[:port]/path/` prefix (never logged). */
  credentials: { prefix: string; header: string }[];
  /** True when the npm registry differs from the public one (any source). */
  npmOverridden: boolean;
  /** True when the JSR registry differs from the public one (any source). */
  jsrOverridden: boolean;
}

/** Options of {@link registrySettings}. */
export interface RegistrySettingsOptions {
  /** Directory whose nearest `.npmrc` applies. */
  cwd: string;
  /** Explicit npm registry (wins over everything). */
  registry?: string | undefined;
  /** Explicit JSR npm-compatible registry (wins over everything). */
  jsrRegistry?: string | undefined;
  /** Environment lookup. @default the process environment */
  env?: ((name: string) => string | undefined) | undefined;
}

function withSlash(url: string): string {
  return url.endsWith("/") ? url : url + "/";
}

/** Parses `.npmrc` text (ini `key=value`, `;`/`#` comments, `${VAR}` expanded). */
export function parseNpmrc(
  text: string,
  env: (name: string) => string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith(";") || line.startsWith("#") || line.startsWith("[")) continue;
    const eq = line.indexOf("=");
    if (eq <= 0) continue;
    const expand = (s: string) => s.replace(/\$\{([^}]+)\}/g, (_, name) => env(name) ?? "");
    const key = expand(line.slice(0, eq).trim());
    let value = line.slice(eq + 1).trim();
    if (/^".*"$/.test(value) || /^'.*'$/.test(value)) value = value.slice(1, -1);
    out[key] = expand(value);
  }
  return out;
}

function nearestNpmrc(cwd: string): string | null {
  for (let dir = resolve(cwd);; dir = dirname(dir)) {
    const candidate = join(dir, ".npmrc");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) return null;
  }
}

function readNpmrc(path: string | null, env: (n: string) => string | undefined) {
  if (!path) return {};
  try {
    return parseNpmrc(readFileSync(path, "utf8"), env);
  } catch {
    return {};
  }
}

/** Reads the registry settings from options, environment and `.npmrc` files. */
export function registrySettings(options: RegistrySettingsOptions): RegistrySettings {
  const lookup = options.env ?? getEnv;
  const env = (name: string) => {
    const v = lookup(name);
    return v === undefined || v.trim() === "" ? undefined : v.trim();
  };
  let home = "";
  try {
    home = homedir();
  } catch {
    home = "";
  }
  const userPath = env("NPM_CONFIG_USERCONFIG") ?? env("npm_config_userconfig") ??
    (home ? join(home, ".npmrc") : null);
  const project = nearestNpmrc(options.cwd);
  const user = userPath && userPath !== project && existsSync(userPath)
    ? readNpmrc(userPath, env)
    : {};
  const merged: Record<string, string> = { ...user, ...readNpmrc(project, env) };
  const registry = withSlash(
    (options.registry || undefined) ?? env("VF_NPM_REGISTRY") ?? env("NPM_CONFIG_REGISTRY") ??
      env("npm_config_registry") ?? merged.registry ?? DEFAULT_NPM_REGISTRY,
  );
  const scopes: Record<string, string> = {};
  for (const [k, v] of Object.entries(merged)) {
    const m = /^(@[^:]+):registry$/.exec(k);
    if (m && v) scopes[m[1]!] = withSlash(v); // required group of the match above
  }
  const jsrRegistry = withSlash(
    (options.jsrRegistry || undefined) ?? env("VF_JSR_REGISTRY") ?? scopes["@jsr"] ??
      DEFAULT_JSR_REGISTRY,
  );
  delete scopes["@jsr"];
  const credentials: { prefix: string; header: string }[] = [];
  for (const [k, v] of Object.entries(merged)) {
    const m = /^(\/\/.+?):(_authToken|_auth)$/.exec(k);
    if (!m || !v) continue;
    credentials.push({
      prefix: withSlash(m[1]!), // required group of the match above
      header: m[2] === "_authToken" ? `Bearer ${v}` : `Basic ${v}`,
    });
  }
  credentials.sort((a, b) => b.prefix.length - a.prefix.length);
  return {
    registry,
    scopes,
    jsrRegistry,
    credentials,
    npmOverridden: registry !== DEFAULT_NPM_REGISTRY || Object.keys(scopes).length > 0,
    jsrOverridden: jsrRegistry !== DEFAULT_JSR_REGISTRY,
  };
}

/** The registry base URL serving an npm package name. */
export function registryFor(settings: RegistrySettings, name: string): string {
  if (name.startsWith("@jsr/")) return settings.jsrRegistry;
  if (name.startsWith("@")) {
    const scope = name.slice(0, name.indexOf("/"));
    if (settings.scopes[scope]) return settings.scopes[scope];
  }
  return settings.registry;
}

/** The `authorization` header for a URL, from the longest matching credential prefix. */
export function authorizationFor(settings: RegistrySettings, url: string): string | undefined {
  const u = new URL(url);
  const key = `//${u.host}${u.pathname}`;
  return settings.credentials.find((c) => key.startsWith(c.prefix))?.header;
}
