/**
 * A loopback registry speaking the npm registry protocol, for tests.
 *
 * ```ts
 * const reg = await startNpmRegistry();            // or { mode: "jsr" }
 * reg.publish("@acme/set", "1.2.3", tgzBytes);     // packument + tarball + integrity
 * // NPM_CONFIG_REGISTRY=reg.url ... ; inspect reg.requests
 * await reg.close();
 * ```
 *
 * `GET /<name>` (scoped names as `@scope%2fname` or `@scope/name`) answers the package
 * document: the abbreviated form (`application/vnd.npm.install-v1+json`) when the client
 * asks for it, else the full one, with `dist-tags`, `versions[v].dist.{tarball,
 * integrity, shasum}` and `time`. `GET /<name>/-/<base>-<version>.tgz` answers the
 * tarball. Unknown packages and files are 404 `{"error":"Not found"}`; anything but
 * GET/HEAD is 405; with `token` set, a request without `authorization: Bearer <token>`
 * is 401. In `jsr` mode it behaves as JSR's npm-compatible endpoint: only `@jsr/<scope>__
 * <name>` packages exist and tarballs live under `/~/11/@jsr/<scope>__<name>/<v>.tgz`.
 *
 * {@link packTarball} builds a package tarball (ustar + gzip) from files.
 *
 * @module
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

/** One published version. */
interface Published {
  version: string;
  tarball: Uint8Array;
  /** Bytes actually served for the tarball (differs from `tarball` when tampered). */
  served: Uint8Array;
  integrity: string;
  shasum: string;
  time: string;
  dependencies: Record<string, string>;
}

/** Options of {@link startNpmRegistry}. */
export interface NpmRegistryOptions {
  /** `npm` (default) or `jsr` (JSR's npm-compatible endpoint). */
  mode?: "npm" | "jsr";
  /** Require `authorization: Bearer <token>` on every request. */
  token?: string;
}

/** Options of {@link NpmRegistry.publish}. */
export interface PublishOptions {
  /** Dist-tag to point at this version. @default "latest" (unless `tag: null`) */
  tag?: string | null;
  /** Declared dependencies (metadata only). */
  dependencies?: Record<string, string>;
  /** Publish without `dist.integrity` (only `shasum`), as very old packages are. */
  noIntegrity?: boolean;
  /** The publish time recorded in `time` (e.g. past a client's minimum age). @default now */
  time?: Date | undefined;
}

/** A running fake registry. */
export interface NpmRegistry {
  /** Base URL, ending in `/`. */
  url: string;
  /** `METHOD path` of every request, in order. */
  requests: string[];
  /** Publishes a version (tarball bytes as `npm pack` writes them). */
  publish(name: string, version: string, tarball: Uint8Array, options?: PublishOptions): void;
  /** Serves other bytes for a version's tarball than the ones its integrity names. */
  tamper(name: string, version: string, bytes: Uint8Array): void;
  /** Removes a package entirely (later requests 404). */
  unpublish(name: string): void;
  close(): Promise<void>;
}

function sri(bytes: Uint8Array): string {
  return `sha512-${createHash("sha512").update(bytes).digest("base64")}`;
}

/** Starts the registry on 127.0.0.1 with an OS-chosen port. */
export async function startNpmRegistry(options: NpmRegistryOptions = {}): Promise<NpmRegistry> {
  const mode = options.mode ?? "npm";
  const packages = new Map<
    string,
    { versions: Map<string, Published>; tags: Map<string, string> }
  >();
  const requests: string[] = [];
  let base = "";

  const validName = (name: string) =>
    mode === "jsr"
      ? /^@jsr\/[a-z0-9][a-z0-9-]*__[a-z0-9][a-z0-9-]*$/.test(name)
      : /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/.test(name);

  const tarballUrl = (name: string, version: string) =>
    mode === "jsr"
      ? `${base}~/11/${name}/${version}.tgz`
      : `${base}${name}/-/${name.split("/").pop()}-${version}.tgz`;

  const manifest = (name: string, p: Published, full: boolean) => ({
    name,
    version: p.version,
    ...(full ? { _id: `${name}@${p.version}`, description: "" } : {}),
    dependencies: p.dependencies,
    dist: {
      tarball: tarballUrl(name, p.version),
      shasum: p.shasum,
      ...(p.integrity ? { integrity: p.integrity } : {}),
    },
  });

  const send = (res: http.ServerResponse, status: number, body: unknown, type: string) => {
    const data = body instanceof Uint8Array ? body : new TextEncoder().encode(JSON.stringify(body));
    res.writeHead(status, { "content-type": type, "content-length": data.length });
    res.end(data);
  };
  const notFound = (res: http.ServerResponse) =>
    send(res, 404, { error: "Not found" }, "application/json");

  const server = http.createServer((req, res) => {
    const method = req.method ?? "GET";
    const rawPath = (req.url ?? "/").split("?")[0] ?? "/";
    requests.push(`${method} ${rawPath}`);
    if (method !== "GET" && method !== "HEAD") {
      send(res, 405, { error: "Method not allowed" }, "application/json");
      return;
    }
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
      send(res, 401, { error: "Unauthorized" }, "application/json");
      return;
    }
    let path: string;
    try {
      path = decodeURIComponent(rawPath.slice(1));
    } catch {
      notFound(res);
      return;
    }
    // tarballs
    const jsrTar = /^~\/11\/(@jsr\/[^/]+)\/([^/]+)\.tgz$/.exec(path);
    const npmTar = /^((?:@[^/]+\/)?[^/@]+)\/-\/([^/]+)-(\d[^/]*)\.tgz$/.exec(path);
    if (mode === "jsr" ? jsrTar : npmTar) {
      const [name, version] = mode === "jsr"
        ? [jsrTar![1]!, jsrTar![2]!]
        : [npmTar![1]!, npmTar![3]!];
      if (mode === "npm" && npmTar![2] !== name.split("/").pop()) return notFound(res);
      const p = packages.get(name)?.versions.get(version);
      if (!p) return notFound(res);
      send(res, 200, p.served, "application/octet-stream");
      return;
    }
    // package documents
    if (!validName(path)) return notFound(res);
    const pkg = packages.get(path);
    if (!pkg || pkg.versions.size === 0) return notFound(res);
    const corgi = /application\/vnd\.npm\.install-v1\+json/.test(req.headers.accept ?? "");
    const versions: Record<string, unknown> = {};
    const time: Record<string, string> = {};
    for (const [v, p] of pkg.versions) {
      versions[v] = manifest(path, p, !corgi);
      time[v] = p.time;
    }
    const doc = corgi
      ? {
        name: path,
        modified: new Date().toISOString(),
        "dist-tags": Object.fromEntries(pkg.tags),
        versions,
      }
      : {
        _id: path,
        name: path,
        "dist-tags": Object.fromEntries(pkg.tags),
        versions,
        time: { created: Object.values(time)[0], modified: new Date().toISOString(), ...time },
      };
    send(res, 200, doc, corgi ? "application/vnd.npm.install-v1+json" : "application/json");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;

  return {
    url: base,
    requests,
    publish(name, version, tarball, opts = {}) {
      if (!validName(name)) throw new Error(`fake registry (${mode}): invalid name ${name}`);
      const pkg = packages.get(name) ?? { versions: new Map(), tags: new Map() };
      packages.set(name, pkg);
      pkg.versions.set(version, {
        version,
        tarball,
        served: tarball,
        integrity: opts.noIntegrity ? "" : sri(tarball),
        shasum: createHash("sha1").update(tarball).digest("hex"),
        time: (opts.time ?? new Date()).toISOString(),
        dependencies: opts.dependencies ?? {},
      });
      const tag = opts.tag === undefined ? "latest" : opts.tag;
      if (tag !== null) pkg.tags.set(tag, version);
    },
    tamper(name, version, bytes) {
      const p = packages.get(name)?.versions.get(version);
      if (!p) throw new Error(`fake registry: ${name}@${version} is not published`);
      p.served = bytes;
    },
    unpublish(name) {
      packages.delete(name);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections?.();
        server.close(() => r());
      }),
  };
}

function header(name: string, size: number, type: "0" | "5", mode: number): Uint8Array {
  const h = new Uint8Array(512);
  const put = (text: string, offset: number, length: number) => {
    const bytes = new TextEncoder().encode(text);
    if (bytes.length > length) throw new Error(`tar field too long: ${text}`);
    h.set(bytes, offset);
  };
  const oct = (n: number, length: number) => n.toString(8).padStart(length - 1, "0") + "\0";
  let prefix = "";
  let short = name;
  if (new TextEncoder().encode(name).length > 100) {
    const cut = name.lastIndexOf("/", 155);
    prefix = name.slice(0, cut);
    short = name.slice(cut + 1);
  }
  put(short, 0, 100);
  put(oct(mode, 8), 100, 8);
  put(oct(0, 8), 108, 8);
  put(oct(0, 8), 116, 8);
  put(oct(size, 12), 124, 12);
  put(oct(499162500, 12), 136, 12);
  put("        ", 148, 8);
  put(type, 156, 1);
  put("ustar\0", 257, 6);
  put("00", 263, 2);
  put(prefix, 345, 155);
  let sum = 0;
  for (const b of h) sum += b;
  put(sum.toString(8).padStart(6, "0") + "\0 ", 148, 8);
  return h;
}

/**
 * A package tarball as `npm pack` writes one: every file under `package/` (or `prefix`),
 * ustar headers, gzip. Values are file contents (strings are UTF-8).
 */
export function packTarball(
  files: Record<string, string | Uint8Array>,
  options: { prefix?: string; extraEntries?: { name: string; type: "0" | "5" }[] } = {},
): Uint8Array {
  const prefix = options.prefix ?? "package/";
  const chunks: Uint8Array[] = [];
  for (const e of options.extraEntries ?? []) chunks.push(header(e.name, 0, e.type, 0o755));
  for (const [path, content] of Object.entries(files)) {
    const data = typeof content === "string" ? new TextEncoder().encode(content) : content;
    chunks.push(header(prefix + path, data.length, "0", 0o644), data);
    const pad = (512 - (data.length % 512)) % 512;
    if (pad) chunks.push(new Uint8Array(pad));
  }
  chunks.push(new Uint8Array(1024));
  const total = chunks.reduce((n, c) => n + c.length, 0);
  const tar = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    tar.set(c, at);
    at += c.length;
  }
  return new Uint8Array(gzipSync(tar));
}
