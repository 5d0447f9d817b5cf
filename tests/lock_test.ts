import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { PluginError } from "../kit/errors.ts";
import { LOCK_FILE_NAME, lockPathFor, openPluginLock, PluginLock } from "../lib/plugins/lock.ts";
import { loadPlugin } from "../lib/plugins/load.ts";
import { configForDump } from "../lib/run/config_dump.ts";
import { type NpmRegistry, packTarball, startNpmRegistry } from "./fakes/npm_registry.ts";

function tasksetSource(id: string): string {
  return `export default { kind: "taskset", abi: 1, id: ${JSON.stringify(id)}, ` +
    `description: "locked", config: null, load() { return []; } };\n`;
}

function tarball(name: string, version: string, id: string): Uint8Array {
  return packTarball({
    "package.json": JSON.stringify({ name, version, type: "module", main: "index.js" }),
    "index.js": tasksetSource(id),
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

/** A fresh directory holding `eval.toml` for one taskset id. */
function configDir(tasksetId: string): string {
  const dir = mkdtempSync(join(tmpdir(), "vf-lock-cfg-"));
  writeFileSync(
    join(dir, "eval.toml"),
    `model = "oracle"\n\n[env.taskset]\nid = ${JSON.stringify(tasksetId)}\n`,
  );
  return dir;
}

function readLock(dir: string) {
  return JSON.parse(readFileSync(join(dir, LOCK_FILE_NAME), "utf8"));
}

describe("vf.lock through the config pipeline", () => {
  let reg: NpmRegistry;
  let cwd: string;
  const saved: Record<string, string | undefined> = {};
  /** Loads the config and saves its lock, as a launch (`vf eval`, `startEval`) does. */
  const load = async (dir: string, ...flags: string[]) => {
    const loaded = await loadEvalConfig(["@", join(dir, "eval.toml"), ...flags], { cwd });
    loaded.lock?.save();
    return loaded;
  };

  before(async () => {
    cwd = mkdtempSync(join(tmpdir(), "vf-lock-"));
    for (const k of ["VF_NPM_REGISTRY", "VF_CACHE_DIR"]) saved[k] = process.env[k];
    reg = await startNpmRegistry();
    process.env.VF_NPM_REGISTRY = reg.url;
    process.env.VF_CACHE_DIR = join(cwd, "cache");
    reg.publish("@acme/locked", "1.2.0", tarball("@acme/locked", "1.2.0", "locked-1.2.0"));
    reg.publish("@acme/locked", "1.3.0", tarball("@acme/locked", "1.3.0", "locked-1.3.0"));
  });
  after(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await reg.close();
  });

  it("--lock writes the resolved version and integrity beside the config", async () => {
    const dir = configDir("npm:@acme/locked@^1.2");
    const loaded = await load(dir, "--lock");
    assert.equal(loaded.plugins.taskset?.id, "locked-1.3.0");
    const lock = readLock(dir);
    assert.equal(lock.version, 1);
    const entry = lock.plugins["npm:@acme/locked@^1.2"];
    assert.equal(entry.resolved, "npm:@acme/locked@1.3.0");
    assert.equal(entry.version, "1.3.0");
    assert.match(entry.integrity, /^sha512-/);
  });

  it("loading a config writes no vf.lock: the launch that runs it saves the lock", async () => {
    const dir = configDir("npm:@acme/locked@^1.2");
    const loaded = await loadEvalConfig(["@", join(dir, "eval.toml"), "--lock"], { cwd });
    assert.equal(existsSync(join(dir, LOCK_FILE_NAME)), false);
    assert.equal(loaded.lock?.save(), true);
    assert.equal(readLock(dir).plugins["npm:@acme/locked@^1.2"].version, "1.3.0");
  });

  it("keeps resolving to the locked version after a newer one is published", async () => {
    const dir = configDir("npm:@acme/locked@^1");
    await load(dir, "--lock");
    assert.equal(readLock(dir).plugins["npm:@acme/locked@^1"].version, "1.3.0");
    reg.publish("@acme/locked", "1.4.0", tarball("@acme/locked", "1.4.0", "locked-1.4.0"));
    const pinned = await load(dir);
    assert.equal(pinned.plugins.taskset?.id, "locked-1.3.0");
    const frozen = await load(dir, "--frozen");
    assert.equal(frozen.plugins.taskset?.id, "locked-1.3.0");
    const other = configDir("npm:@acme/locked@^1");
    assert.equal((await load(other)).plugins.taskset?.id, "locked-1.4.0");
  });

  it("--frozen refuses a changed range and writes nothing", async () => {
    const dir = configDir("npm:@acme/locked@^1.2");
    await load(dir, "--lock");
    const before = readFileSync(join(dir, LOCK_FILE_NAME), "utf8");
    writeFileSync(
      join(dir, "eval.toml"),
      `model = "oracle"\n[env.taskset]\nid = "npm:@acme/locked@~1.3.0"\n`,
    );
    const e = await pluginError(() => load(dir, "--frozen"));
    assert.equal(e.code, "plugin_lock_frozen");
    assert.match(e.message, /has no entry for "npm:@acme\/locked@~1\.3\.0"/);
    assert.match(e.message, /it locks "npm:@acme\/locked@\^1\.2"/);
    assert.equal(readFileSync(join(dir, LOCK_FILE_NAME), "utf8"), before);
    // --lock accepts the change and adds the entry
    await load(dir, "--lock");
    assert.ok(readLock(dir).plugins["npm:@acme/locked@~1.3.0"]);
  });

  it("--frozen without a lock file is refused", async () => {
    const dir = configDir("npm:@acme/locked@^1.2");
    const e = await pluginError(() => load(dir, "--frozen"));
    assert.equal(e.code, "plugin_lock_missing");
    assert.equal(existsSync(join(dir, LOCK_FILE_NAME)), false);
  });

  it("fails closed when the locked version's content changed", async () => {
    reg.publish("swapped", "1.0.0", tarball("swapped", "1.0.0", "original"));
    const dir = configDir("npm:swapped@1.0.0");
    await load(dir, "--lock");
    // the registry now publishes other bytes under the same version
    reg.unpublish("swapped");
    reg.publish("swapped", "1.0.0", tarball("swapped", "1.0.0", "replaced"));
    const fresh = join(cwd, "fresh-cache");
    process.env.VF_CACHE_DIR = fresh;
    try {
      for (const flags of [[], ["--lock"], ["--frozen"]]) {
        const e = await pluginError(() => load(dir, ...flags));
        assert.equal(e.code, "plugin_lock_mismatch", flags.join(" "));
        assert.match(e.message, /Cannot load taskset "npm:swapped@1\.0\.0"/);
      }
    } finally {
      process.env.VF_CACHE_DIR = join(cwd, "cache");
    }
  });

  it("loads a locked, cached plugin without asking the registry", async () => {
    const dir = configDir("npm:@acme/locked@1.2.0");
    await load(dir, "--lock");
    const count = reg.requests.length;
    const loaded = await load(dir, "--frozen");
    assert.equal(loaded.plugins.taskset?.id, "locked-1.2.0");
    assert.equal(reg.requests.length, count);
  });

  it("refuses a malformed lock file", async () => {
    const dir = configDir("npm:@acme/locked@^1.2");
    writeFileSync(join(dir, LOCK_FILE_NAME), `{"version": 1, "plugins": {"x": {"resolved": 1}}}`);
    const e = await pluginError(() => load(dir));
    assert.equal(e.code, "plugin_lock_invalid");
    writeFileSync(join(dir, LOCK_FILE_NAME), "not json");
    assert.equal((await pluginError(() => load(dir))).code, "plugin_lock_invalid");
  });

  it("keeps lock and frozen out of configs/eval.json's keys and refuses --push", async () => {
    const dir = configDir("echo");
    const e = await loadEvalConfig(["@", join(dir, "eval.toml"), "--push"], { cwd }).then(
      () => null,
      (err) => err,
    );
    assert.match(String(e?.message), /--push: verifiers-ts has no results upload/);
    const ok = await loadEvalConfig(["@", join(dir, "eval.toml"), "--no-push", "--lock"], {
      cwd,
    });
    assert.equal(ok.config.push, false);
    assert.equal(ok.config.lock, true);
    const dumped = configForDump(ok.config);
    assert.equal("lock" in dumped || "frozen" in dumped, false);
    assert.equal(dumped.push, false);
  });
});

describe("vf.lock for URL plugins", () => {
  it("pins a URL's content and fails closed when it changes", async () => {
    let body = tasksetSource("url-v1");
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/javascript" });
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/judge.js`;
    const dir = mkdtempSync(join(tmpdir(), "vf-lock-url-"));
    const cacheDir = join(dir, "cache");
    try {
      const lockPath = join(dir, LOCK_FILE_NAME);
      const writer = openPluginLock(lockPath, { lock: true })!;
      const p = await loadPlugin("taskset", url, { cwd: dir, lock: writer, fetch: { cacheDir } });
      assert.equal(p.id, "url-v1");
      assert.equal(writer.save(), true);
      const entry = JSON.parse(readFileSync(lockPath, "utf8")).plugins[url];
      assert.equal(entry.resolved, url);
      assert.match(entry.integrity, /^sha512-/);
      body = tasksetSource("url-v2");
      const freshCache = join(dir, "cache2");
      const e = await pluginError(() =>
        loadPlugin("taskset", url, {
          cwd: dir,
          lock: openPluginLock(lockPath, {})!,
          fetch: { cacheDir: freshCache },
        })
      );
      assert.equal(e.code, "plugin_lock_mismatch");
      // the cached, locked copy still loads (content-addressed by the locked integrity)
      const cached = await loadPlugin("taskset", url, {
        cwd: dir,
        lock: openPluginLock(lockPath, { frozen: true })!,
        fetch: { cacheDir },
      });
      assert.equal(cached.id, "url-v1");
    } finally {
      server.closeAllConnections?.();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe("PluginLock", () => {
  it("lives beside the first config file, else in the working directory", () => {
    assert.equal(lockPathFor(["conf/a.toml", "b.toml"], "/w"), "/w/conf/vf.lock");
    assert.equal(lockPathFor(["/abs/x.toml"], "/w"), "/abs/vf.lock");
    assert.equal(lockPathFor([], "/w"), "/w/vf.lock");
  });

  it("is absent without flags and without a file; writes sorted, stable JSON", () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-lock-unit-"));
    const path = join(dir, LOCK_FILE_NAME);
    assert.equal(openPluginLock(path, {}), undefined);
    const lock = openPluginLock(path, { lock: true })!;
    assert.ok(lock instanceof PluginLock);
    const integrity = "sha512-" + "A".repeat(86) + "==";
    lock.record("npm:b@1", { resolved: "npm:b@1.0.0", version: "1.0.0", integrity });
    lock.record("npm:a@1", { resolved: "npm:a@1.0.0", version: "1.0.0", integrity });
    assert.equal(lock.save(), true);
    const text = readFileSync(path, "utf8");
    assert.deepEqual(Object.keys(JSON.parse(text).plugins), ["npm:a@1", "npm:b@1"]);
    const mtime = statSync(path).mtimeMs;
    const again = openPluginLock(path, { lock: true })!;
    again.record("npm:a@1", { resolved: "npm:a@1.0.0", version: "1.0.0", integrity });
    assert.equal(again.save(), false);
    assert.equal(statSync(path).mtimeMs, mtime);
    const frozen = openPluginLock(path, { lock: true, frozen: true })!;
    assert.equal(frozen.mode, "frozen");
  });
});
