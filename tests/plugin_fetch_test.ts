import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { gunzipSync } from "node:zlib";
import { loadPlugin } from "../lib/plugins/load.ts";
import { PluginError } from "../kit/errors.ts";
import { maxSatisfying, parseRange, parseVersion, satisfies } from "../lib/plugins/fetch/semver.ts";
import {
  checkIntegrity,
  computeIntegrity,
  integrityConflict,
  shasumToIntegrity,
} from "../lib/plugins/fetch/integrity.ts";
import { extractPackage, readTar } from "../lib/plugins/fetch/tar.ts";
import { parseNpmrc, registryFor, registrySettings } from "../lib/plugins/fetch/npmrc.ts";
import { parsePackageSpec } from "../lib/plugins/fetch/package_spec.ts";
import { pickVersion } from "../lib/plugins/fetch/registry.ts";
import { fetchPlugin } from "../lib/plugins/fetch/resolve.ts";
import { foreignImports, packageEntry } from "../lib/plugins/fetch/entry.ts";
import { type NpmRegistry, packTarball, startNpmRegistry } from "./fakes/npm_registry.ts";
import { at } from "./_assert.ts";

const noEnv = () => undefined;

/** A plugin module without imports, as a bundled package would hold it. */
function tasksetSource(id: string, extra = ""): string {
  return `${extra}export default { kind: "taskset", abi: 1, id: ${JSON.stringify(id)}, ` +
    `description: "fetched", config: null, load() { return []; } };\n`;
}

function pkgTarball(
  name: string,
  version: string,
  files: Record<string, string> = {},
  pkg: Record<string, unknown> = {},
): Uint8Array {
  return packTarball({
    "package.json": JSON.stringify({ name, version, type: "module", ...pkg }),
    ...files,
  });
}

async function pluginError(fn: () => Promise<unknown>): Promise<PluginError> {
  try {
    await fn();
  } catch (err) {
    assert.ok(err instanceof PluginError, `expected PluginError, got ${err}`);
    return err;
  }
  assert.fail("expected a PluginError");
}

describe("semver ranges (npm rules)", () => {
  const cases: [string, string, boolean][] = [
    ["1.2.3", "^1.2", true],
    ["1.9.0", "^1.2", true],
    ["2.0.0", "^1.2", false],
    ["1.1.9", "^1.2", false],
    ["0.2.5", "^0.2.3", true],
    ["0.3.0", "^0.2.3", false],
    ["0.0.3", "^0.0.3", true],
    ["0.0.4", "^0.0.3", false],
    ["0.9.9", "^0.x", true],
    ["1.2.9", "~1.2.3", true],
    ["1.3.0", "~1.2.3", false],
    ["1.9.0", "~1", true],
    ["1.2.3", "1.2.3", true],
    ["1.2.4", "1.2.3", false],
    ["1.2.7", "1.2", true],
    ["1.2.7", "1.2.x", true],
    ["3.0.0", "*", true],
    ["3.0.0", "", true],
    ["1.5.0", ">=1.2 <2", true],
    ["2.0.0", ">=1.2 <2", false],
    ["1.3.0", ">1.2", true],
    ["1.2.9", ">1.2", false],
    ["1.2.9", "<=1.2", true],
    ["1.3.0", "<=1.2", false],
    ["2.3.4", "1.2.3 - 2.3.4", true],
    ["2.3.5", "1.2.3 - 2.3.4", false],
    ["2.3.9", "1.2 - 2.3", true],
    ["2.4.0", "1.2 - 2.3", false],
    ["3.1.0", "^1 || ^3", true],
    ["2.1.0", "^1 || ^3", false],
    ["1.3.0-beta.1", "^1.2", false],
    ["1.2.4-beta.1", "^1.2.4-alpha", true],
    ["1.2.5-beta.1", "^1.2.4-alpha", false],
    ["1.2.4-alpha.10", ">=1.2.4-alpha.9", true],
    ["1.2.4-alpha.beta", ">1.2.4-alpha.1", true],
    ["1.0.0", "v1.0.0", true],
    ["1.2.3", ">= 1.2.3", true],
  ];
  for (const [v, r, want] of cases) {
    it(`${v} ${want ? "satisfies" : "does not satisfy"} "${r}"`, () => {
      assert.equal(satisfies(v, r), want);
    });
  }

  it("rejects what is not a range or a version", () => {
    assert.equal(parseRange("latest"), null);
    assert.equal(parseRange("^1.2.3.4"), null);
    assert.equal(parseVersion("1.2"), null);
    assert.equal(parseVersion("01.2.3"), null);
    assert.deepEqual(parseVersion("1.2.3-rc.1+build.5")?.prerelease, ["rc", 1]);
  });

  it("picks the highest satisfying version, ordering prereleases below releases", () => {
    const vs = ["1.0.0", "1.2.0", "1.10.0", "1.9.0", "2.0.0-rc.1", "2.0.0"];
    assert.equal(maxSatisfying(vs, "^1"), "1.10.0");
    assert.equal(maxSatisfying(vs, ">=2.0.0-rc.0"), "2.0.0");
    assert.equal(maxSatisfying(vs, "~2.0.0-rc.0 <2.0.0"), "2.0.0-rc.1");
    assert.equal(maxSatisfying(vs, "^3"), null);
  });

  it("prefers the latest tag when it satisfies the range, as npm does", () => {
    const doc = {
      name: "p",
      "dist-tags": { latest: "1.2.0", next: "2.0.0-rc.1" },
      versions: Object.fromEntries(
        ["1.2.0", "1.3.0", "2.0.0-rc.1"].map((
          v,
        ) => [v, { name: "p", version: v, dist: { tarball: "" } }]),
      ),
    };
    assert.equal(pickVersion(doc, ""), "1.2.0");
    assert.equal(pickVersion(doc, "^1"), "1.2.0");
    assert.equal(pickVersion(doc, "~1.3"), "1.3.0");
    assert.equal(pickVersion(doc, "next"), "2.0.0-rc.1");
    assert.equal(pickVersion(doc, "beta"), null);
    assert.equal(pickVersion(doc, "^5"), null);
  });
});

describe("integrity strings", () => {
  it("computes and checks SRI, using the strongest algorithm listed", () => {
    const bytes = new TextEncoder().encode("plugin");
    const sri = computeIntegrity(bytes);
    assert.match(sri, /^sha512-[A-Za-z0-9+/]+=*$/);
    assert.equal(checkIntegrity(bytes, sri), null);
    assert.equal(checkIntegrity(bytes, `sha1-AAAA ${sri}`), null);
    const other = new TextEncoder().encode("plugim");
    assert.equal(checkIntegrity(other, sri), computeIntegrity(other));
    assert.equal(
      computeIntegrity(new Uint8Array()),
      "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    );
  });

  it("turns an npm shasum into sha1 SRI and detects conflicting strings", () => {
    assert.equal(
      shasumToIntegrity("da39a3ee5e6b4b0d3255bfef95601890afd80709"),
      "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk=",
    );
    assert.equal(shasumToIntegrity("nothex"), null);
    const a = computeIntegrity(new TextEncoder().encode("a"));
    const b = computeIntegrity(new TextEncoder().encode("b"));
    assert.equal(integrityConflict(a, b), true);
    assert.equal(integrityConflict(a, a), false);
    assert.equal(integrityConflict(a, "sha1-2jmj7l5rSw0yVb/vlWAYkK/YBwk="), false);
  });
});

describe("tar reader and package extraction", () => {
  it("extracts npm's package/ layout, long paths included", () => {
    const long = `${"deep/".repeat(25)}file.js`;
    const tgz = packTarball({ "package.json": "{}", "dist/plugin.js": "x", [long]: "y" });
    const dir = mkdtempSync(join(tmpdir(), "vf-tar-"));
    const written = extractPackage(tgz, dir).sort();
    assert.deepEqual(written, [long, "dist/plugin.js", "package.json"].sort());
    assert.equal(readFileSync(join(dir, long), "utf8"), "y");
  });

  it("skips entries that would escape the target and refuses corrupt headers", () => {
    const tgz = packTarball({ "../../escape.js": "bad", "ok.js": "good" });
    const dir = mkdtempSync(join(tmpdir(), "vf-tar-"));
    assert.deepEqual(extractPackage(tgz, join(dir, "pkg")), ["ok.js"]);
    assert.equal(existsSync(join(dir, "escape.js")), false);
    const tar = new Uint8Array(gunzipSync(packTarball({ "a.js": "a" })));
    tar[10] = (tar[10] ?? 0) ^ 0xff; // corrupt the name: the checksum no longer matches

    assert.throws(() => readTar(tar), /corrupt tar header/);
  });
});

describe("registry settings (.npmrc and environment)", () => {
  it("parses .npmrc with comments, quotes and ${VAR} expansion", () => {
    const rc = parseNpmrc(
      `; comment\n# comment\nregistry = "https://r.example/"\n//r.example/:_authToken=\${TOK}\n`,
      (n) => (n === "TOK" ? "t0k" : undefined),
    );
    assert.deepEqual(rc, { registry: "https://r.example/", "//r.example/:_authToken": "t0k" });
  });

  it("layers VF_* over npm's env over the project .npmrc, with scopes and credentials", () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-npmrc-"));
    mkdirSync(join(dir, "sub"));
    writeFileSync(
      join(dir, ".npmrc"),
      "registry=http://project.example/npm\n@acme:registry=http://acme.example/\n" +
        "@jsr:registry=http://jsr.example/\n//acme.example/:_authToken=secret-token\n",
    );
    const env = (vars: Record<string, string>) => (n: string) => vars[n];
    const base = { cwd: join(dir, "sub") };
    const fromFile = registrySettings({
      ...base,
      env: env({ NPM_CONFIG_USERCONFIG: "/nonexistent" }),
    });
    assert.equal(fromFile.registry, "http://project.example/npm/");
    assert.equal(fromFile.jsrRegistry, "http://jsr.example/");
    assert.equal(registryFor(fromFile, "@acme/set"), "http://acme.example/");
    assert.equal(registryFor(fromFile, "plain"), "http://project.example/npm/");
    assert.equal(registryFor(fromFile, "@jsr/a__b"), "http://jsr.example/");
    assert.equal(at(fromFile.credentials, 0).header, "Bearer secret-token");
    assert.equal(fromFile.npmOverridden, true);
    const fromEnv = registrySettings({
      ...base,
      env: env({
        NPM_CONFIG_USERCONFIG: "/nonexistent",
        npm_config_registry: "http://env.example",
      }),
    });
    assert.equal(fromEnv.registry, "http://env.example/");
    const vf = registrySettings({
      ...base,
      env: env({
        NPM_CONFIG_REGISTRY: "http://env.example",
        VF_NPM_REGISTRY: "http://vf.example/",
      }),
    });
    assert.equal(vf.registry, "http://vf.example/");
    const plain = registrySettings({
      cwd: tmpdir(),
      env: env({ NPM_CONFIG_USERCONFIG: "/nonexistent" }),
    });
    assert.equal(plain.registry, "https://registry.npmjs.org/");
    assert.equal(plain.jsrRegistry, "https://npm.jsr.io/");
  });
});

describe("npm: and jsr: specifiers", () => {
  it("splits name, range and subpath; maps JSR names to @jsr/scope__name", () => {
    assert.deepEqual(parsePackageSpec("npm:@acme/vf-mathsets@^1.2/extra"), {
      source: "npm",
      name: "@acme/vf-mathsets",
      displayName: "@acme/vf-mathsets",
      range: "^1.2",
      subpath: "/extra",
    });
    assert.equal(parsePackageSpec("npm:plain").range, "");
    assert.equal(parsePackageSpec("npm:plain@next").range, "next");
    const jsr = parsePackageSpec("jsr:@acme/sets@1");
    assert.equal(jsr.name, "@jsr/acme__sets");
    assert.equal(jsr.displayName, "@acme/sets");
  });

  it("refuses malformed names and ranges", async () => {
    for (const bad of ["npm:Bad_Name", "npm:@acme", "jsr:sets", "jsr:@Acme/sets", "npm:x@^^1"]) {
      const e = await pluginError(() => Promise.resolve().then(() => parsePackageSpec(bad)));
      assert.equal(e.code, "plugin_specifier_invalid", bad);
    }
  });
});

describe("package entry and foreign imports", () => {
  it("prefers the ./plugin export, then ., module, main", () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-entry-"));
    mkdirSync(join(dir, "dist"));
    writeFileSync(join(dir, "dist", "plugin.js"), "");
    writeFileSync(join(dir, "mod.js"), "");
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ exports: { ".": "./mod.js", "./plugin": { import: "./dist/plugin.js" } } }),
    );
    assert.equal(packageEntry(dir, ""), join(dir, "dist", "plugin.js"));
    assert.equal(packageEntry(dir, "/plugin"), join(dir, "dist", "plugin.js"));
    assert.equal(packageEntry(dir, "/nope"), null);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ main: "mod.js" }));
    assert.equal(packageEntry(dir, ""), join(dir, "mod.js"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ exports: "../outside.js" }));
    assert.equal(packageEntry(dir, ""), null);
  });

  it("lists bare and npm:/jsr: imports, skipping node built-ins", () => {
    const src = `import { z } from "zod";\nimport fs from "node:fs";\nimport path from "path";\n` +
      `export * from "@acme/x/sub";\nconst m = await import("npm:left-pad@1");\nimport "./rel.js";`;
    assert.deepEqual(foreignImports(src, false), ["zod", "@acme/x/sub", "npm:left-pad@1"]);
    assert.deepEqual(foreignImports(src, true), [
      "zod",
      "@acme/x/sub",
      "npm:left-pad@1",
      "./rel.js",
    ]);
  });
});

describe("fetching plugins from a loopback npm registry", () => {
  let reg: NpmRegistry;
  let cacheDir: string;
  let cwd: string;
  const opts = () => ({ cwd, registry: reg.url, env: noEnv });

  const savedCacheDir = process.env.VF_CACHE_DIR;
  before(async () => {
    const root = mkdtempSync(join(tmpdir(), "vf-fetch-"));
    cacheDir = join(root, "cache");
    cwd = join(root, "work");
    mkdirSync(cwd);
    process.env.VF_CACHE_DIR = cacheDir;
    reg = await startNpmRegistry();
    for (const v of ["0.9.0", "1.2.0", "1.2.5", "1.3.0-beta.1", "2.0.0"]) {
      reg.publish(
        "@acme/sets",
        v,
        pkgTarball("@acme/sets", v, { "dist/plugin.js": tasksetSource(`sets-${v}`) }, {
          exports: { ".": "./dist/plugin.js" },
        }),
        { tag: v === "1.2.5" ? "latest" : null },
      );
    }
  });
  after(async () => {
    await reg.close();
    if (savedCacheDir === undefined) delete process.env.VF_CACHE_DIR;
    else process.env.VF_CACHE_DIR = savedCacheDir;
  });

  it("resolves a range to the highest matching version, verifies it and imports the entry", async () => {
    const p = await loadPlugin("taskset", "npm:@acme/sets@~1.2", { cwd, fetch: opts() });
    assert.equal(p.id, "sets-1.2.5");
    const q = await loadPlugin("taskset", "npm:@acme/sets@>=1.3.0-beta.0 <2", {
      cwd,
      fetch: opts(),
    });
    assert.equal(q.id, "sets-1.3.0-beta.1");
    const latest = await loadPlugin("taskset", "npm:@acme/sets", { cwd, fetch: opts() });
    assert.equal(latest.id, "sets-1.2.5");
    assert.ok(reg.requests.includes("GET /@acme%2fsets"));
    assert.ok(reg.requests.includes("GET /@acme/sets/-/sets-1.2.5.tgz"));
    assert.ok(readdirSync(join(cacheDir, "plugins", "packages")).length >= 2);
  });

  it("loads from the cache when the registry cannot be reached", async () => {
    const local = await startNpmRegistry();
    local.publish(
      "offline-set",
      "1.0.0",
      pkgTarball("offline-set", "1.0.0", { "index.js": tasksetSource("offline") }),
    );
    const first = await fetchPlugin("npm:offline-set@^1", { cwd, registry: local.url, env: noEnv });
    assert.equal(first.offline, false);
    await local.close();
    const notes: string[] = [];
    const again = await fetchPlugin("npm:offline-set@^1", {
      cwd,
      registry: local.url,
      env: noEnv,
      log: (l) => notes.push(l),
    });
    assert.equal(again.offline, true);
    assert.equal(again.file, first.file);
    assert.match(
      notes.join("\n"),
      /is unreachable \(.*\); using the cached metadata of offline-set saved \S+Z, which may be stale \(it resolves \^1 to 1\.0\.0\)/,
    );
    const mod = await import(again.importTarget);
    assert.equal(mod.default.id, "offline");
    const never = await pluginError(() =>
      fetchPlugin("npm:never-fetched@1", { cwd, registry: local.url, env: noEnv })
    );
    assert.equal(never.code, "plugin_fetch_failed");
  });

  it("rejects a tampered tarball and caches nothing of it", async () => {
    const good = pkgTarball("tampered-set", "1.0.0", { "index.js": tasksetSource("good") });
    reg.publish("tampered-set", "1.0.0", good);
    reg.tamper(
      "tampered-set",
      "1.0.0",
      pkgTarball("tampered-set", "1.0.0", { "index.js": tasksetSource("evil") }),
    );
    const before = readdirSync(join(cacheDir, "plugins", "packages")).length;
    const e = await pluginError(() =>
      loadPlugin("taskset", "npm:tampered-set@1.0.0", { cwd, fetch: opts() })
    );
    assert.equal(e.code, "plugin_integrity_mismatch");
    assert.match(
      e.message,
      /Cannot load taskset "npm:tampered-set@1\.0\.0": integrity check failed/,
    );
    assert.equal(readdirSync(join(cacheDir, "plugins", "packages")).length, before);
  });

  it("says not found (listing built-ins) for a package the registry does not have", async () => {
    const e = await pluginError(() =>
      loadPlugin("taskset", "npm:@acme/absent@^1", { cwd, fetch: opts() })
    );
    assert.equal(e.code, "plugin_not_found");
    assert.match(e.message, /Cannot find taskset "npm:@acme\/absent@\^1"/);
    assert.match(e.hint ?? "", /echo/);
  });

  it("names the published versions when none matches the range", async () => {
    const e = await pluginError(() =>
      loadPlugin("taskset", "npm:@acme/sets@^7", { cwd, fetch: opts() })
    );
    assert.equal(e.code, "plugin_version_not_found");
    assert.match(e.hint ?? "", /1\.2\.5, 1\.3\.0-beta\.1, 2\.0\.0/);
  });

  it("reports the plugin's own missing dependency by name", async () => {
    reg.publish(
      "needs-dep",
      "1.0.0",
      pkgTarball("needs-dep", "1.0.0", {
        "index.js": tasksetSource("needs-dep", `import pad from "vf-left-pad-missing";\n`),
      }, { dependencies: { "vf-left-pad-missing": "^1" } }),
      { dependencies: { "vf-left-pad-missing": "^1" } },
    );
    const e = await pluginError(() =>
      loadPlugin("taskset", "npm:needs-dep@1", { cwd, fetch: opts() })
    );
    assert.equal(e.code, "plugin_import_failed");
    assert.match(e.message, /its own dependency "vf-left-pad-missing" is missing/);
    assert.match(e.message, /Cannot load taskset "npm:needs-dep@1"/);
  });

  it("surfaces a syntax error of the fetched module, naming the plugin", async () => {
    reg.publish(
      "broken-syntax",
      "1.0.0",
      pkgTarball("broken-syntax", "1.0.0", {
        "index.js": "export default { kind: 'taskset' abi: 1 };",
      }),
    );
    const e = await pluginError(() =>
      loadPlugin("taskset", "npm:broken-syntax@1", { cwd, fetch: opts() })
    );
    assert.equal(e.code, "plugin_import_failed");
    assert.match(e.message, /Cannot load taskset "npm:broken-syntax@1": importing it failed/);
  });

  it("verifies packages that only publish a shasum", async () => {
    reg.publish(
      "old-style",
      "1.0.0",
      pkgTarball("old-style", "1.0.0", { "index.js": tasksetSource("old") }),
      {
        noIntegrity: true,
      },
    );
    const f = await fetchPlugin("npm:old-style@1", opts());
    assert.match(f.integrity, /^sha512-/);
    reg.publish("old-bad", "1.0.0", pkgTarball("old-bad", "1.0.0", { "index.js": "1" }), {
      noIntegrity: true,
    });
    reg.tamper("old-bad", "1.0.0", pkgTarball("old-bad", "1.0.0", { "index.js": "2" }));
    const e = await pluginError(() => fetchPlugin("npm:old-bad@1", opts()));
    assert.equal(e.code, "plugin_integrity_mismatch");
  });

  it("can hand the module over as a data: URL (for hosts that accept only that)", async () => {
    const f = await fetchPlugin("npm:@acme/sets@0.9.0", { ...opts(), importMode: "data" });
    assert.match(f.importTarget, /^data:text\/javascript;base64,/);
    const mod = await import(f.importTarget);
    assert.equal(mod.default.id, "sets-0.9.0");
  });

  it("sends the .npmrc token of a private registry (and fails clearly without it)", async () => {
    const priv = await startNpmRegistry({ token: "s3cret" });
    try {
      priv.publish(
        "private-set",
        "1.0.0",
        pkgTarball("private-set", "1.0.0", { "index.js": tasksetSource("private") }),
      );
      const dir = mkdtempSync(join(tmpdir(), "vf-priv-"));
      const host = new URL(priv.url).host;
      const denied = await pluginError(() =>
        fetchPlugin("npm:private-set@1", { cwd: dir, registry: priv.url, env: noEnv })
      );
      assert.equal(denied.code, "plugin_fetch_failed");
      assert.match(denied.message, /HTTP 401/);
      assert.doesNotMatch(denied.message + denied.hint, /s3cret/);
      writeFileSync(join(dir, ".npmrc"), `//${host}/:_authToken=s3cret\n`);
      const f = await fetchPlugin("npm:private-set@1", {
        cwd: dir,
        registry: priv.url,
        env: noEnv,
      });
      assert.equal(f.version, "1.0.0");
    } finally {
      await priv.close();
    }
  });
});

describe("fetching from a JSR npm-compatible endpoint and from URLs", () => {
  let jsr: NpmRegistry;
  let server: Server;
  let base = "";
  let cwd: string;
  const savedCacheDir = process.env.VF_CACHE_DIR;
  before(async () => {
    cwd = mkdtempSync(join(tmpdir(), "vf-jsr-"));
    process.env.VF_CACHE_DIR = join(cwd, "cache");
    jsr = await startNpmRegistry({ mode: "jsr" });
    jsr.publish(
      "@jsr/acme__judges",
      "0.3.1",
      pkgTarball("@jsr/acme__judges", "0.3.1", {
        "mod.js": `import { z } from "zod";\nexport const x = z;`,
        "dist/plugin.js": tasksetSource("jsr-set"),
      }, {
        exports: {
          ".": { types: "./_dist/mod.d.ts", default: "./mod.js" },
          "./plugin": "./dist/plugin.js",
        },
      }),
    );
    server = createServer((req, res) => {
      if (req.url === "/plugin.js") {
        res.writeHead(200, { "content-type": "text/javascript" });
        res.end(tasksetSource("url-set"));
      } else if (req.url === "/relative.js") {
        res.writeHead(200, { "content-type": "text/javascript" });
        res.end(tasksetSource("rel", `import "./helper.js";\n`));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    if (savedCacheDir === undefined) delete process.env.VF_CACHE_DIR;
    else process.env.VF_CACHE_DIR = savedCacheDir;
    await jsr.close();
    server.closeAllConnections?.();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("fetches jsr:@scope/name as @jsr/scope__name and imports its ./plugin export", async () => {
    const p = await loadPlugin("taskset", "jsr:@acme/judges@^0.3", {
      cwd,
      fetch: { jsrRegistry: jsr.url, env: noEnv },
    });
    assert.equal(p.id, "jsr-set");
    assert.ok(jsr.requests.includes("GET /@jsr%2facme__judges"));
    assert.ok(jsr.requests.includes("GET /~/11/@jsr/acme__judges/0.3.1.tgz"));
    const missing = await pluginError(() =>
      loadPlugin("taskset", "jsr:@acme/nothing@1", {
        cwd,
        fetch: { jsrRegistry: jsr.url, env: noEnv },
      })
    );
    assert.equal(missing.code, "plugin_not_found");
  });

  it("fetches a URL module into the cache and says not found for a 404", async () => {
    const f = await fetchPlugin(`${base}/plugin.js`, { cwd, env: noEnv });
    assert.equal((await import(f.importTarget)).default.id, "url-set");
    assert.equal(f.singleFile, true);
    assert.equal(readFileSync(f.file, "utf8"), tasksetSource("url-set"));
    const e = await pluginError(() => fetchPlugin(`${base}/missing.js`, { cwd, env: noEnv }));
    assert.equal(e.code, "plugin_not_found");
  });

  it("reuses a fetched URL module when its server is gone", async () => {
    const once = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/typescript" });
      res.end(tasksetSource("once-set").replace("config: null", "config: null as null"));
    });
    await new Promise<void>((r) => once.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(once.address() as AddressInfo).port}/judge`;
    const first = await fetchPlugin(url, { cwd, env: noEnv });
    assert.match(first.file, /judge\.ts$/);
    once.closeAllConnections?.();
    await new Promise<void>((r) => once.close(() => r()));
    const notes: string[] = [];
    const again = await fetchPlugin(url, { cwd, env: noEnv, log: (l) => notes.push(l) });
    assert.equal(again.offline, true);
    assert.equal(again.file, first.file);
    assert.match(at(notes, 0), /unreachable, using the cached copy/);
    assert.equal((await import(again.importTarget)).default.id, "once-set");
  });

  it("names a relative import a single fetched file cannot bring along", async () => {
    const rel = await pluginError(() =>
      loadPlugin("taskset", `${base}/relative.js`, { cwd, fetch: { env: noEnv } })
    );
    // deno run imports URLs natively, elsewhere the resolver fetches: both name the gap
    assert.equal(rel.code, "plugin_import_failed");
    assert.match(rel.message, /helper\.js/);
  });
});
