import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { runProcess } from "./_cli.ts";
import { satisfies } from "../lib/plugins/fetch/semver.ts";
import { VERSION } from "../kit/version.ts";

const ROOT = join(import.meta.dirname!, "..");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8"));
/** One installed package as package-lock.json records it. */
interface LockEntry {
  name: string;
  version?: string;
  engines?: { node?: string };
  hasInstallScript?: boolean;
}
const lockEntries: LockEntry[] = Object.entries(lock.packages as Record<string, LockEntry>)
  .filter(([path]) => path.startsWith("node_modules/"))
  .map(([path, entry]) => ({ ...entry, name: path.replace(/^.*node_modules\//, "") }));
/** The lowest Node version the README promises. */
const NODE_FLOOR = "20.0.0";

describe("npm install", () => {
  it("installs nothing whose engines exclude the supported Node floor or this Node", () => {
    for (const e of lockEntries) {
      const range = e.engines?.node;
      if (!range) continue;
      assert.ok(satisfies(NODE_FLOOR, range), `${e.name}@${e.version} requires node ${range}`);
      assert.ok(
        satisfies(process.versions.node, range),
        `${e.name}@${e.version} requires node ${range}, this is ${process.versions.node}`,
      );
    }
  });

  it("decides every dependency's install script in allowScripts (no npm warning)", () => {
    const withScripts = lockEntries.filter((e) => e.hasInstallScript).map((e) => e.name);
    assert.ok(withScripts.includes("deno") && withScripts.includes("bun"));
    for (const name of withScripts) {
      assert.equal(typeof pkg.allowScripts?.[name], "boolean", `${name} not in allowScripts`);
    }
    // the runtimes the CLI and the tests run under must be allowed to fetch their binary
    assert.equal(pkg.allowScripts.deno, true);
    assert.equal(pkg.allowScripts.bun, true);
  });
});

describe("the vf executable npm links", () => {
  it("is a Node launcher, so it runs wherever npm does", () => {
    assert.equal(pkg.bin.vf, "./bin/vf.js");
    assert.match(readFileSync(join(ROOT, pkg.bin.vf), "utf8"), /^#!\/usr\/bin\/env node\n/);
  });

  it("`npm exec vf` prints the version", async () => {
    const r = await runProcess("npm", ["exec", "--offline", "--", "vf", "--version"], {
      cwd: ROOT,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `vf ${VERSION}`);
  });

  it("runs the demo from another folder and passes exit codes through", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-bin-"));
    try {
      const launcher = join(ROOT, pkg.bin.vf);
      const quickstart = join(ROOT, "examples", "quickstart.toml");
      const r = await runProcess(
        "node",
        [launcher, "eval", "@", quickstart, "--model", "oracle", "-o", dir, "--display", "plain"],
        { cwd: dir, timeoutMs: 120_000 },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^reward +1\.000$/m);
      const bad = await runProcess("node", [launcher, "eval", "--no-such-flag"], {
        cwd: dir,
        timeoutMs: 60_000,
      });
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /no-such-flag/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
