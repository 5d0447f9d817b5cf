/**
 * Agent installs (kit/harness/acp/install.ts) from a loopback npm registry with the real
 * npm: one install however many rollouts ask at once, none on the second run, pins checked
 * against the lock npm wrote, nothing half-made left by a failure, and prune.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { Buffer } from "node:buffer";
import process from "node:process";
import {
  type AgentBundle,
  ensureAgentInstall,
  installName,
  isInstalled,
  pruneAgentInstalls,
} from "../kit/harness/acp/install.ts";
import { HarnessError } from "../kit/errors.ts";
import { type NpmRegistry, packTarball, startNpmRegistry } from "./fakes/npm_registry.ts";

let registry: NpmRegistry;
let root: string;
let integrity: string;
const npmEnv = () => ({
  npm_config_registry: registry.url,
  npm_config_cache: join(root, "npm-cache"),
});

before(async () => {
  registry = await startNpmRegistry();
  root = mkdtempSync(join(tmpdir(), "vf-agent-install-"));
  const tgz = packTarball({
    "package.json": JSON.stringify({ name: "fake-agent", version: "1.0.0", bin: "cli.js" }),
    "cli.js": "console.log('fake agent');\n",
  });
  integrity = `sha512-${createHash("sha512").update(tgz).digest("base64")}`;
  registry.publish("fake-agent", "1.0.0", tgz);
});
after(async () => {
  await registry.close();
  rmSync(root, { recursive: true, force: true });
});

function bundle(pinned = integrity): AgentBundle {
  return {
    name: "fake",
    version: "1.0.0",
    packages: [{ name: "fake-agent", version: "1.0.0", integrity: pinned }],
  };
}

const tarballGets = () =>
  registry.requests.filter((r) => r.startsWith("GET") && r.endsWith(".tgz"));

describe("ensureAgentInstall", () => {
  it("installs once for concurrent callers, and not at all the second time", async () => {
    const agents = join(root, "agents-once");
    const [a, b, c] = await Promise.all(
      [1, 2, 3].map(() => ensureAgentInstall(bundle(), { root: agents, npmEnv: npmEnv() })),
    );
    assert.equal(a, b);
    assert.equal(b, c);
    assert.ok(existsSync(join(a!, "node_modules", "fake-agent", "cli.js")));
    assert.equal(tarballGets().length, 1, registry.requests.join("\n"));
    assert.ok(isInstalled(bundle(), agents));
    const before = registry.requests.length;
    assert.equal(await ensureAgentInstall(bundle(), { root: agents, npmEnv: npmEnv() }), a);
    assert.equal(registry.requests.length, before, "the second run asks the registry nothing");
    assert.deepEqual(readdirSync(agents), [installName(bundle())], "no lock or temp left");
  });

  it("refuses an install whose integrity is not the pinned one and leaves nothing", async () => {
    const agents = join(root, "agents-pin");
    const wrong = `sha512-${Buffer.alloc(64, 1).toString("base64")}`;
    await assert.rejects(
      ensureAgentInstall(bundle(wrong), { root: agents, npmEnv: npmEnv() }),
      (e: unknown) =>
        e instanceof HarnessError && /fake-agent@1\.0\.0 has integrity sha512-/.test(e.message) &&
        e.message.includes(wrong),
    );
    assert.deepEqual(readdirSync(agents), []);
  });

  it("waits for another process's install instead of installing again", async () => {
    const agents = join(root, "agents-wait");
    const dir = join(agents, installName(bundle()));
    mkdirSync(`${dir}.lock`, { recursive: true });
    writeFileSync(join(`${dir}.lock`, "owner"), String(process.pid)); // a live owner
    setTimeout(() => {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, ".vf-install.json"), "{}");
      rmSync(`${dir}.lock`, { recursive: true });
    }, 400);
    const before = registry.requests.length;
    assert.equal(await ensureAgentInstall(bundle(), { root: agents, npmEnv: npmEnv() }), dir);
    assert.equal(registry.requests.length, before);
  });

  it("takes over a lock whose owner is gone", async () => {
    const agents = join(root, "agents-stale");
    const dir = join(agents, installName(bundle()));
    mkdirSync(`${dir}.lock`, { recursive: true });
    writeFileSync(join(`${dir}.lock`, "owner"), "2147483646"); // no such process
    assert.equal(await ensureAgentInstall(bundle(), { root: agents, npmEnv: npmEnv() }), dir);
    assert.ok(isInstalled(bundle(), agents));
  });
});

describe("pruneAgentInstalls", () => {
  it("removes installs not kept, and every one with no keep list", async () => {
    const agents = join(root, "agents-prune");
    const dir = await ensureAgentInstall(bundle(), { root: agents, npmEnv: npmEnv() });
    mkdirSync(join(agents, "old@0.1.0-abc"));
    writeFileSync(join(agents, "old@0.1.0-abc", "big"), "x".repeat(1000));
    const kept = pruneAgentInstalls({ root: agents, keep: [installName(bundle())] });
    assert.deepEqual(kept.removed, ["old@0.1.0-abc"]);
    assert.equal(kept.bytes, 1000);
    assert.ok(existsSync(dir));
    const all = pruneAgentInstalls({ root: agents });
    assert.deepEqual(all.removed, [installName(bundle())]);
    assert.deepEqual(readdirSync(agents), []);
  });
});
