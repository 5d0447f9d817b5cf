/**
 * A loopback JSR, for tests: the publish API `deno publish` talks to and the registry
 * files `deno run jsr:` reads, so a package goes through the real publisher (its checks
 * and its import rewriting) and is then run the way users run a published version.
 *
 * ```ts
 * const jsr = await startJsrRegistry({ token: "t", packages: ["@verifiers/verifiers-ts"] });
 * // JSR_URL=jsr.url deno publish --token t    then    JSR_URL=jsr.url deno run jsr:...
 * await jsr.close();
 * ```
 *
 * Publish API (under `/api/`, as `deno publish` derives it from `JSR_URL`):
 * `GET scopes/<scope>` and `GET scopes/<scope>/packages/<name>` (200 for the packages the
 * registry was started with, else 404 `scopeNotFound` / `packageNotFound`);
 * `GET scopes/<scope>/packages/<name>/versions/<version>` (404 `packageVersionNotFound`
 * until published);
 * `POST scopes/<scope>/packages/<name>/versions/<version>?config=/<file>` with the gzipped
 * tarball (`authorization: Bearer <token>` required, 401 otherwise; a version published
 * before is 409 `duplicateVersionPublish`; the config file must be in the tarball and name
 * this package and version), answering a publishing task that is already `success`;
 * `GET publish_status/<id>`.
 *
 * Registry files: `GET /@<scope>/<name>/meta.json` (`scope`, `name`, `latest`, `versions`),
 * `GET /@<scope>/<name>/<version>_meta.json` (`exports` normalized to an object, and
 * `manifest`: every file as `/<path>` with its `size` and `checksum` `sha256-<hex>`), and
 * `GET /@<scope>/<name>/<version>/<path>` (the file's bytes as published). Anything else is
 * 404; registry files answer only GET/HEAD.
 *
 * @module
 */
import { createHash, randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzip, readTar } from "../../lib/plugins/fetch/tar.ts";

/** One published version. */
interface Version {
  files: Map<string, Uint8Array>;
  exports: Record<string, string>;
  createdAt: string;
}

/** Options of {@link startJsrRegistry}. */
export interface JsrRegistryOptions {
  /** The token publishing requires. */
  token: string;
  /** Packages that exist (created beforehand, as on jsr.io), e.g. `@scope/name`. */
  packages: string[];
  /**
   * Dates each version this long before it was published (`createdAt`), as a version
   * released earlier is: past a client's minimum dependency age. @default 0
   */
  backdateMs?: number;
}

/** A running fake JSR. */
export interface JsrRegistry {
  /** Base URL (the value of `JSR_URL`), ending in `/`. */
  url: string;
  /** `METHOD path` of every request, in order. */
  requests: string[];
  /** The files of a published version (`/path` -> bytes), or undefined. */
  files(pkg: string, version: string): Map<string, Uint8Array> | undefined;
  close(): Promise<void>;
}

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** The content type JSR serves a file with. */
function contentType(path: string): string {
  if (/\.(?:ts|mts|cts)$/.test(path)) return "application/typescript; charset=utf-8";
  if (/\.(?:js|mjs|cjs)$/.test(path)) return "application/javascript; charset=utf-8";
  if (path.endsWith(".json")) return "application/json";
  if (path.endsWith(".md")) return "text/markdown; charset=utf-8";
  return "text/plain; charset=utf-8";
}

/** `exports` of a config as JSR stores it: an object whose keys and values start with `.`. */
function normalizeExports(exports: unknown): Record<string, string> {
  const entries: [string, string][] = typeof exports === "string"
    ? [[".", exports]]
    : Object.entries(exports as Record<string, string>);
  const dot = (p: string) => (p.startsWith(".") ? p : `./${p.replace(/^\//, "")}`);
  return Object.fromEntries(entries.map(([k, v]) => [dot(k), dot(v)]));
}

/** Starts the fake JSR on 127.0.0.1 with an OS-chosen port. */
export async function startJsrRegistry(options: JsrRegistryOptions): Promise<JsrRegistry> {
  const known = new Set(options.packages);
  const scopes = new Set(options.packages.map((p) => p.slice(1).split("/")[0]));
  const published = new Map<string, Map<string, Version>>();
  const tasks = new Map<string, unknown>();
  const requests: string[] = [];

  const send = (res: http.ServerResponse, status: number, body: unknown, type?: string) => {
    const data = body instanceof Uint8Array ? body : new TextEncoder().encode(JSON.stringify(body));
    res.writeHead(status, {
      "content-type": type ?? "application/json",
      "content-length": data.length,
    });
    res.end(data);
  };
  const apiError = (res: http.ServerResponse, status: number, code: string, message: string) =>
    send(res, status, { code, message });

  const readBody = (req: http.IncomingMessage) =>
    new Promise<Uint8Array>((resolve, reject) => {
      const chunks: Uint8Array[] = [];
      req.on("data", (c: Uint8Array) => chunks.push(c));
      req.on("end", () => {
        const total = chunks.reduce((n, c) => n + c.length, 0);
        const out = new Uint8Array(total);
        let at = 0;
        for (const c of chunks) {
          out.set(c, at);
          at += c.length;
        }
        resolve(out);
      });
      req.on("error", reject);
    });

  async function publish(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    pkg: string,
    version: string,
    config: string | null,
  ) {
    if (req.headers.authorization !== `Bearer ${options.token}`) {
      return apiError(res, 401, "missingPermission", "a valid token is required");
    }
    if (!known.has(pkg)) return apiError(res, 404, "packageNotFound", `${pkg} does not exist`);
    if (!SEMVER.test(version)) return apiError(res, 400, "invalidVersion", version);
    if (req.headers["content-encoding"] !== "gzip") {
      return apiError(res, 400, "invalidTarball", "the tarball must be gzip-encoded");
    }
    const versions = published.get(pkg) ?? new Map<string, Version>();
    if (versions.has(version)) {
      return send(res, 409, {
        code: "duplicateVersionPublish",
        message: `${pkg}@${version} is already published`,
        task: { id: randomUUID(), status: "success", error: null },
      });
    }
    let files: Map<string, Uint8Array>;
    try {
      files = new Map();
      for (const e of readTar(gunzip(await readBody(req)))) {
        if (e.type !== "file") continue;
        files.set("/" + e.path.replace(/^\.\//, "").replace(/^\//, ""), e.data);
      }
    } catch (err) {
      return apiError(res, 400, "invalidTarball", (err as Error).message);
    }
    const configBytes = config ? files.get(config) : undefined;
    if (!configBytes) {
      return apiError(res, 400, "configFileNotFound", `config file ${config} not in the tarball`);
    }
    let meta: { name?: string; version?: string; exports?: unknown };
    try {
      meta = JSON.parse(new TextDecoder().decode(configBytes));
    } catch {
      return apiError(res, 400, "invalidConfigFile", `${config} is not JSON`);
    }
    if (meta.name !== pkg || meta.version !== version || meta.exports === undefined) {
      return apiError(res, 400, "configFileNameMismatch", `${config} does not match ${pkg}`);
    }
    const exports = normalizeExports(meta.exports);
    for (const target of Object.values(exports)) {
      if (!files.has(target.slice(1))) {
        return apiError(res, 400, "configFileExportsInvalid", `export ${target} not in tarball`);
      }
    }
    versions.set(version, {
      files,
      exports,
      createdAt: new Date(Date.now() - (options.backdateMs ?? 0)).toISOString(),
    });
    published.set(pkg, versions);
    const task = {
      id: randomUUID(),
      status: "success",
      error: null,
      packageScope: pkg.slice(1).split("/")[0],
      packageName: pkg.split("/")[1],
      packageVersion: version,
    };
    tasks.set(task.id, task);
    send(res, 202, task);
  }

  function registryFile(res: http.ServerResponse, path: string) {
    const m = /^\/(@[a-z0-9-]+\/[a-z0-9-]+)\/(.+)$/.exec(path);
    if (!m) return apiError(res, 404, "notFound", path);
    const pkg = m[1]!;
    const rest = m[2]!;
    const versions = published.get(pkg);
    if (!versions) return apiError(res, 404, "notFound", path);
    if (rest === "meta.json") {
      const all = [...versions.keys()];
      return send(res, 200, {
        scope: pkg.slice(1).split("/")[0],
        name: pkg.split("/")[1],
        latest: all[all.length - 1],
        versions: Object.fromEntries(
          [...versions].map(([v, info]) => [v, { createdAt: info.createdAt }]),
        ),
      });
    }
    const vm = /^([^/]+)_meta\.json$/.exec(rest);
    if (vm) {
      const info = versions.get(vm[1]!);
      if (!info) return apiError(res, 404, "notFound", path);
      const manifest: Record<string, { size: number; checksum: string }> = {};
      for (const [file, bytes] of info.files) {
        manifest[file] = {
          size: bytes.length,
          checksum: `sha256-${createHash("sha256").update(bytes).digest("hex")}`,
        };
      }
      return send(res, 200, { manifest, exports: info.exports });
    }
    const slash = rest.indexOf("/");
    const info = slash > 0 ? versions.get(rest.slice(0, slash)) : undefined;
    const bytes = info?.files.get(rest.slice(slash));
    if (!bytes) return apiError(res, 404, "notFound", path);
    send(res, 200, bytes, contentType(path));
  }

  const server = http.createServer((req, res) => {
    const method = req.method ?? "GET";
    const url = new URL(req.url ?? "/", "http://x");
    let path: string;
    try {
      path = decodeURIComponent(url.pathname);
    } catch {
      return apiError(res, 404, "notFound", url.pathname);
    }
    requests.push(`${method} ${path}`);
    if (path.startsWith("/api/")) {
      const api = path.slice("/api/".length);
      const scope = /^scopes\/([a-z0-9-]+)$/.exec(api);
      const pkg = /^scopes\/([a-z0-9-]+)\/packages\/([a-z0-9-]+)$/.exec(api);
      const ver = /^scopes\/([a-z0-9-]+)\/packages\/([a-z0-9-]+)\/versions\/([^/]+)$/.exec(api);
      const status = /^publish_status\/([^/]+)$/.exec(api);
      if (method === "GET" && scope) {
        return scopes.has(scope[1])
          ? send(res, 200, { scope: scope[1] })
          : apiError(res, 404, "scopeNotFound", `scope @${scope[1]} not found`);
      }
      if (method === "GET" && pkg) {
        const name = `@${pkg[1]}/${pkg[2]}`;
        return known.has(name)
          ? send(res, 200, { scope: pkg[1], name: pkg[2] })
          : apiError(res, 404, "packageNotFound", `${name} not found`);
      }
      if (method === "GET" && ver) {
        const info = published.get(`@${ver[1]}/${ver[2]}`)?.get(ver[3]!);
        return info
          ? send(res, 200, { scope: ver[1], package: ver[2], version: ver[3] })
          : apiError(res, 404, "packageVersionNotFound", `${ver[3]} not found`);
      }
      if (method === "POST" && ver) {
        publish(req, res, `@${ver[1]}/${ver[2]}`, ver[3]!, url.searchParams.get("config")).catch(
          (err) => apiError(res, 500, "internalServerError", String(err)),
        );
        return;
      }
      if (method === "GET" && status) {
        const task = tasks.get(status[1]!);
        return task ? send(res, 200, task) : apiError(res, 404, "publishingTaskNotFound", api);
      }
      return apiError(res, 404, "notFound", path);
    }
    if (method !== "GET" && method !== "HEAD") {
      return apiError(res, 405, "methodNotAllowed", method);
    }
    registryFile(res, path);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url,
    requests,
    files: (pkg, version) => published.get(pkg)?.get(version)?.files,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}
