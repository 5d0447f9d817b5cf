/**
 * `vf harnesses list | install | prune` as a user runs them, on an agent cache of the test's
 * own (`VF_CACHE_DIR`): what is listed, bad usage (exit 2, one line, a hint), and prune.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./_cli.ts";
import pi from "../plugins/harnesses/pi/mod.ts";
import { installName } from "../kit/harness/acp/install.ts";

function cache(): string {
  return mkdtempSync(join(tmpdir(), "vf-harnesses-cli-"));
}

describe("vf harnesses", () => {
  it("lists the agent harnesses and whether this cache has them", async () => {
    const dir = cache();
    const r = await runCli(["harnesses", "list"], { env: { VF_CACHE_DIR: dir } });
    assert.equal(r.code, 0, r.stderr);
    for (const id of ["pi", "claude-code", "codex", "opencode"]) {
      assert.match(r.stdout, new RegExp(`^${id}\\s+\\S+\\s+no\\s+${id}@`, "m"));
    }
    assert.doesNotMatch(r.stdout, /^bash\b/m, "harnesses without agents are not listed");
    assert.match(r.stderr, new RegExp(`agent installs live in ${join(dir, "agents")}`));
  });

  it("refuses a harness that installs no agent, and a bare install, with exit 2", async () => {
    const env = { VF_CACHE_DIR: cache() };
    const bad = await runCli(["harnesses", "install", "bash"], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /Cannot install harness "bash": it installs no agent/);
    assert.match(bad.stderr, /claude-code, codex, opencode, pi/);
    assert.doesNotMatch(bad.stderr, /\n\s+at /, "no stack trace");
    const bare = await runCli(["harnesses", "install"], { env });
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /name at least one harness/);
  });

  it("prune removes installs of versions no harness pins, --all every one", async () => {
    const dir = cache();
    const agents = join(dir, "agents");
    mkdirSync(join(agents, "pi@0.0.1-old"), { recursive: true });
    writeFileSync(join(agents, "pi@0.0.1-old", "f"), "x".repeat(2_000_000));
    const r = await runCli(["harnesses", "prune"], { env: { VF_CACHE_DIR: dir } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /removed pi@0\.0\.1-old/);
    assert.match(r.stderr, /1 install\(s\) removed, 2\.0 MB freed/);
    assert.equal(existsSync(join(agents, "pi@0.0.1-old")), false);

    const current = join(agents, installName(pi.agentBundle!));
    mkdirSync(current);
    writeFileSync(join(current, ".vf-install.json"), "{}");
    const kept = await runCli(["harnesses", "prune"], { env: { VF_CACHE_DIR: dir } });
    assert.match(kept.stderr, /0 install\(s\) removed/);
    assert.ok(existsSync(current), "the pinned version is kept");
    const all = await runCli(["harnesses", "prune", "--all"], { env: { VF_CACHE_DIR: dir } });
    assert.equal(all.code, 0, all.stderr);
    assert.equal(existsSync(current), false);
  });
});
