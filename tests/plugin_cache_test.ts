/**
 * The plugin cache verified on every use and safe to share: integrity manifests,
 * repair from the verified tarball, refusal offline naming the entry, installs that never
 * replace a directory in use, npm's picking of a prerelease `latest`, and the messages of
 * broken packages — against the loopback npm registry (fast cases; the same cases run
 * against Verdaccio on every host in registry_verdaccio_test.ts).
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PluginError } from "../kit/errors.ts";
import {
  findInstalledPackage,
  installPackage,
  MANIFEST_NAME,
  pluginCacheRoot,
  tarballPath,
  verifyPackageDir,
} from "../lib/plugins/fetch/cache.ts";
import { sha512Hex } from "../lib/plugins/fetch/integrity.ts";
import { pickVersion } from "../lib/plugins/fetch/registry.ts";
import { fetchPlugin } from "../lib/plugins/fetch/resolve.ts";
import { loadPlugin } from "../lib/plugins/load.ts";
import { PluginLock } from "../lib/plugins/lock.ts";
import { defaultRunName } from "../lib/run/naming.ts";
import { type NpmRegistry, packTarball, startNpmRegistry } from "./fakes/npm_registry.ts";

const noEnv = () => undefined;

function tasksetSource(id: string, prompt = "P"): string {
  return `export default { kind: "taskset", abi: 1, id: ${JSON.stringify(id)}, ` +
    `description: ${JSON.stringify(prompt)}, config: null, load() { return []; } };\n`;
}

function pkg(name: string, version: string, files: Record<string, string>, meta = {}) {
  return packTarball({
    "package.json": JSON.stringify({ name, version, type: "module", main: "index.js", ...meta }),
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

describe("npm's version picking: a prerelease latest", () => {
  const doc = {
    name: "p",
    "dist-tags": { latest: "2.0.0-beta.1" },
    versions: Object.fromEntries(
      ["1.0.0", "1.5.0", "2.0.0-beta.1"].map((v) => [v, {
        name: "p",
        version: v,
        dist: { tarball: "" },
      }]),
    ),
  };
  it("takes latest for no range and for *, whatever it points at", () => {
    assert.equal(pickVersion(doc, ""), "2.0.0-beta.1");
    assert.equal(pickVersion(doc, "*"), "2.0.0-beta.1");
  });
  it("keeps prereleases out of other ranges that do not ask for them", () => {
    assert.equal(pickVersion(doc, "^1"), "1.5.0");
    assert.equal(pickVersion(doc, ">=1"), "1.5.0");
    // only the literal "*" follows latest (npm-pick-manifest); "x" is an ordinary range
    assert.equal(pickVersion(doc, "x"), "1.5.0");
  });
});

describe("plugin cache: verified on every use, installs safe across processes", () => {
  let reg: NpmRegistry;
  let root = "";
  let cwd = "";
  const notes: string[] = [];
  const opts = (cacheDir: string, registry = reg.url) => ({
    cwd,
    cacheDir,
    registry,
    env: noEnv,
    log: (l: string) => notes.push(l),
  });
  const tgz = pkg("cached-set", "1.0.0", { "index.js": tasksetSource("cached", "ORIGINAL") });
  const hex = sha512Hex(tgz);

  before(async () => {
    root = mkdtempSync(join(tmpdir(), "vf-cache-"));
    cwd = join(root, "work");
    mkdirSync(cwd);
    reg = await startNpmRegistry();
    reg.publish("cached-set", "1.0.0", tgz);
    reg.publish(
      "broken-main",
      "1.0.0",
      pkg("broken-main", "1.0.0", { "README.md": "x" }, { main: "dist/plugin.js" }),
    );
    reg.publish(
      "broken-json",
      "1.0.0",
      packTarball({ "package.json": '{"name": "broken-json",', "index.js": "export {};\n" }),
    );
  });
  after(() => reg.close());

  it("writes an integrity manifest and a node_modules barrier, and verifies them", () => {
    const cache = join(root, "c-manifest");
    const dir = installPackage(pluginCacheRoot(cache), hex, tgz);
    assert.ok(existsSync(join(cache, "node_modules")), "the barrier that stops Bun's auto-install");
    assert.ok(existsSync(join(dir, "node_modules")));
    const manifest = JSON.parse(readFileSync(join(dir, MANIFEST_NAME), "utf8"));
    assert.deepEqual(Object.keys(manifest.files).sort(), ["index.js", "package.json"]);
    assert.equal(verifyPackageDir(dir), null);
    writeFileSync(join(dir, "node_modules", "evil.js"), "");
    assert.equal(verifyPackageDir(dir), "node_modules/evil.js is not part of the package");
  });

  it("repairs an edited cache entry from the verified tarball, leaving the entry in place", async () => {
    const cache = join(root, "c-repair");
    const first = await fetchPlugin("npm:cached-set@^1", opts(cache));
    appendFileSync(first.file, '\nexport const prompt = "TAMPERED-PROMPT";\n');
    notes.length = 0;
    const again = await fetchPlugin("npm:cached-set@^1", opts(cache));
    assert.notEqual(again.file, first.file);
    assert.doesNotMatch(readFileSync(again.file, "utf8"), /TAMPERED/);
    assert.ok(existsSync(first.file), "a directory another process may read is never removed");
    assert.match(
      notes.join("\n"),
      /cache entry .*packages\/[0-9a-f]+ failed verification \(index\.js was modified\); re-extracted cached-set from its verified tarball into .*\.r1/,
    );
    const mod = await import(again.importTarget);
    assert.equal(mod.default.description, "ORIGINAL");
  });

  it("refuses offline when the entry and its tarball are both corrupt, naming them", async () => {
    const cache = join(root, "c-offline");
    const first = await fetchPlugin("npm:cached-set@^1", opts(cache));
    appendFileSync(first.file, "\n// edited\n");
    appendFileSync(tarballPath(cache, hex), "junk");
    const gone = await startNpmRegistry();
    const url = gone.url;
    await gone.close();
    // the cached metadata is keyed by registry: copy the first registry's by fetching once
    const lock = new PluginLock(join(cwd, "vf.lock"), "update", new Map());
    lock.record("npm:cached-set@^1", {
      resolved: "npm:cached-set@1.0.0",
      version: "1.0.0",
      integrity: first.integrity,
    });
    const err = await pluginError(() =>
      fetchPlugin("npm:cached-set@^1", { ...opts(cache, url), lock })
    );
    assert.equal(err.code, "plugin_fetch_failed");
    const dir = first.file.replace(/\/index\.js$/, "");
    assert.ok(err.message.includes(`${dir} (index.js was modified)`), err.message);
    assert.ok(err.message.includes(`${tarballPath(cache, hex)} (its bytes no longer match`));
    assert.match(err.hint ?? "", /^Remove the corrupt cache entries \(rm -rf .*\) and run again/);
    // online again, the tarball is downloaded again and replaces the corrupt one
    const back = await fetchPlugin("npm:cached-set@^1", { ...opts(cache), lock });
    assert.equal(sha512Hex(new Uint8Array(readFileSync(tarballPath(cache, hex)))), hex);
    assert.equal((await import(back.importTarget)).default.description, "ORIGINAL");
  });

  it("uses the copy another process renamed into place first, never replacing it", () => {
    const cache = pluginCacheRoot(join(root, "c-race"));
    const a = installPackage(cache, hex, tgz);
    const b = installPackage(cache, hex, tgz);
    assert.equal(a, b);
    const entries = readdirSync(join(cache, "packages"));
    assert.deepEqual(entries, [hex], "no temp directory is left behind");
    assert.equal(findInstalledPackage(cache, hex).dir, a);
  });

  it("labels the two sides of a lock mismatch", async () => {
    const cache = join(root, "c-lock");
    const other = `sha512-${btoa("x".repeat(64))}`;
    const lock = new PluginLock(join(cwd, "vf.lock"), "update", new Map());
    lock.record("npm:cached-set@1.0.0", {
      resolved: "npm:cached-set@1.0.0",
      version: "1.0.0",
      integrity: other,
    });
    const err = await pluginError(() =>
      fetchPlugin("npm:cached-set@1.0.0", { ...opts(cache), lock })
    );
    assert.equal(err.code, "plugin_lock_mismatch");
    assert.match(
      err.message,
      new RegExp(`vf\\.lock has ${other.replace(/[+/]/g, "\\$&")}, the registry has sha512-`),
    );
  });

  it("reports a published package that is broken as its own failure, not as not found", async () => {
    const cache = join(root, "c-broken");
    const main = await pluginError(() =>
      loadPlugin("taskset", "npm:broken-main@1", { cwd, fetch: opts(cache) })
    );
    assert.equal(main.code, "plugin_package_invalid");
    assert.match(
      main.message,
      /^Cannot load taskset "npm:broken-main@1": npm:broken-main@1 \(broken-main@1\.0\.0\) is broken: its "main" is dist\/plugin\.js, which is not in the package$/,
    );
    const json = await pluginError(() =>
      loadPlugin("taskset", "npm:broken-json@1", { cwd, fetch: opts(cache) })
    );
    assert.equal(json.code, "plugin_package_invalid");
    assert.match(json.message, /is broken: its package\.json is not valid JSON/);
  });

  it("reports an installed package that is broken as its own failure", async () => {
    const nm = join(cwd, "node_modules");
    mkdirSync(join(nm, "vf-bad-json"), { recursive: true });
    writeFileSync(join(nm, "vf-bad-json", "package.json"), "{ nope");
    mkdirSync(join(nm, "vf-unbuilt"), { recursive: true });
    writeFileSync(
      join(nm, "vf-unbuilt", "package.json"),
      JSON.stringify({ name: "vf-unbuilt", main: "dist/plugin.js" }),
    );
    const bad = await pluginError(() => loadPlugin("taskset", "vf-bad-json", { cwd }));
    assert.equal(bad.code, "plugin_package_invalid");
    assert.match(
      bad.message,
      /the installed package at .*vf-bad-json is broken: its package\.json is not valid JSON/,
    );
    const unbuilt = await pluginError(() => loadPlugin("taskset", "vf-unbuilt", { cwd }));
    assert.match(
      unbuilt.message,
      /is broken: its "main" is dist\/plugin\.js, which is not in the package/,
    );
    assert.match(unbuilt.hint ?? "", /Build the package/);
    const absent = await pluginError(() => loadPlugin("taskset", "vf-absent", { cwd }));
    assert.equal(absent.code, "plugin_not_found");
  });

  it("says not found without nested quotes", async () => {
    const err = await pluginError(() =>
      loadPlugin("taskset", "npm:@acme/nothing@1", { cwd, fetch: opts(join(root, "c-nf")) })
    );
    assert.equal(err.code, "plugin_not_found");
    assert.match(
      err.message,
      /^Cannot find taskset "npm:@acme\/nothing@1": no built-in has that id and there is no npm package @acme\/nothing at http:\/\/127\.0\.0\.1:\d+\/$/,
    );
  });
});

describe("run names of package specifiers", () => {
  const name = (id: string) =>
    defaultRunName(
      {
        env: { id: null, taskset: { id }, agent: { harness: { id: "null" } } },
        model: "oracle",
      } as unknown as Parameters<typeof defaultRunName>[0],
      "abcd1234",
    );
  it("names scoped and unscoped packages alike, by the package name", () => {
    assert.equal(name("npm:my-tasks@^0.1"), "my-tasks--oracle--null--abcd1234");
    assert.equal(name("npm:@acme/my-tasks@^0.1"), "my-tasks--oracle--null--abcd1234");
    assert.equal(name("jsr:@acme/my-tasks@^0.1"), "my-tasks--oracle--null--abcd1234");
  });
});
