/**
 * `vf validate` and `vf debug` on a remote runtime: the Prime sandbox API served by the
 * loopback fake (its real wire protocol), one sandbox per check, each confirmed stopped.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./_cli.ts";
import { type PrimeFake, startPrimeFake } from "./fakes/prime_server.ts";
import { isolationSupported } from "./fakes/prime_sandbox_fs.ts";

const LONG = { timeout: 120_000 };
const skip = isolationSupported() ? false : "the Prime fake needs unshare";

describe("task commands on the prime runtime", { skip }, () => {
  let fake: PrimeFake;
  let dir = "";
  const env = () => ({ ...fake.env(), VF_CACHE_DIR: join(dir, "cache") });
  before(async () => {
    fake = await startPrimeFake();
    dir = mkdtempSync(join(tmpdir(), "vf-task-prime-"));
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("vf validate runs setup and the gold check in a sandbox per check", LONG, async () => {
    const creates = fake.count("create");
    const r = await runCli(
      ["validate", "shell-basics", "-n", "3", "--runtime.type", "prime", "--json"],
      { cwd: dir, env: env() },
    );
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.equal(summary.outcomes.valid, 3, r.stdout);
    assert.equal(fake.count("create") - creates, 6, "gold and setup: one sandbox each");
    assert.equal(fake.liveSandboxes(), 0, "every sandbox stopped");
  });

  it("vf debug shows the sandbox after setup", LONG, async () => {
    const r = await runCli(
      [
        "debug",
        "shell-basics",
        "-n",
        "2",
        "--runtime.type",
        "prime",
        "--command",
        "ls data",
        "--json",
      ],
      { cwd: dir, env: env() },
    );
    assert.equal(r.code, 3, r.stderr); // create-file has no data/ folder: ls exits non-zero
    const [first, second] = JSON.parse(r.stdout);
    assert.equal(first.reason, "nonzero_exit");
    assert.equal(second.reason, "pass");
    assert.equal(second.stdout, "sales.csv\n");
    assert.equal(fake.liveSandboxes(), 0);
  });
});
