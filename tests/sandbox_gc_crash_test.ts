/**
 * `kill -9` of `vf eval` while its sandboxes are being created — the provider has made them,
 * the answers are still on their way — leaves pending ledger entries (written before each
 * create request), and `vf sandboxes gc` resolves them by name in the provider's own listing
 * and stops every sandbox: nothing stays live. Against the Modal fake (SandboxGetFromName)
 * and the Prime fake (GET /api/v1/sandbox, paged, is_active).
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { closeModalConnections } from "../plugins/runtimes/modal/mod.ts";
import { cliArgv, runCli } from "./_cli.ts";
import { setupModalEnv } from "./fakes/modal_env.ts";
import type { ModalTestEnv } from "./fakes/modal_env.ts";
import { type PrimeFake, startPrimeFake } from "./fakes/prime_server.ts";

const CONCURRENCY = 4;

/** Starts `vf eval` on `runtime`, waits until `created()` sandboxes exist, then SIGKILLs it. */
async function killDuringCreation(
  runtime: string,
  env: Record<string, string>,
  created: () => number,
): Promise<string> {
  const cwd = mkdtempSync(join(tmpdir(), "vf-gc-crash-"));
  const [cmd, ...args] = cliArgv([
    "eval",
    "shell-basics",
    "-m",
    "oracle",
    "-c",
    String(CONCURRENCY),
    "--env.agent.runtime.type",
    runtime,
    "--display",
    "none",
  ]);
  const child = spawn(cmd, args, {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => stderr += d);
  const exited = new Promise<string>((r) =>
    child.on("close", (code, signal) => r(signal ?? `exit ${code}`))
  );
  try {
    const deadline = Date.now() + 60_000;
    while (created() < CONCURRENCY) {
      if (child.exitCode !== null) assert.fail(`vf eval ended before the kill:\n${stderr}`);
      if (Date.now() > deadline) assert.fail(`only ${created()} sandboxes created:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGKILL");
    assert.equal(await exited, "SIGKILL");
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  return stderr;
}

describe("kill -9 during sandbox creation, then `vf sandboxes gc`", () => {
  describe("modal", () => {
    let env: ModalTestEnv;
    before(async () => {
      env = await setupModalEnv();
    });
    after(async () => {
      closeModalConnections();
      await env.dispose();
    });

    it("pending entries name every sandbox being created; gc terminates them all", async () => {
      const { fake } = env;
      fake.knobs.createReplyDelayMs = 60_000;
      const childEnv = { ...fake.env, VF_CACHE_DIR: env.cacheDir };
      try {
        await killDuringCreation("modal", childEnv, () => fake.liveSandboxes());
      } finally {
        fake.knobs.createReplyDelayMs = 0;
      }
      assert.equal(fake.liveSandboxes(), CONCURRENCY, "the provider made them");
      const pending = listSandboxes().filter((e) => e.provider === "modal");
      assert.equal(pending.length, CONCURRENCY, JSON.stringify(pending));
      assert.ok(pending.every((e) => e.state === "pending" && e.name), "journaled by name");

      const list = await runCli(["sandboxes", "list"], { env: childEnv });
      assert.equal(list.code, 0, list.stderr);
      assert.equal(list.stdout.match(/\(creating\)/g)?.length, CONCURRENCY, list.stdout);

      const gc = await runCli(["sandboxes", "gc"], { env: childEnv });
      assert.equal(gc.code, 0, gc.stderr);
      assert.equal(gc.stdout.match(/^stopped modal sb-/gm)?.length, CONCURRENCY, gc.stdout);
      assert.equal(fake.liveSandboxes(), 0, "nothing live after gc");
      assert.deepEqual(listSandboxes(), [], "the ledger is empty");
      assert.ok(fake.callsOf("SandboxGetFromName").length >= CONCURRENCY);
    });
  });

  describe("prime", () => {
    let fake: PrimeFake;
    let cache = "";
    let restoreEnv: () => void = () => {};
    const savedCache = process.env.VF_CACHE_DIR;
    before(async () => {
      cache = mkdtempSync(join(tmpdir(), "vf-gc-crash-cache-"));
      process.env.VF_CACHE_DIR = cache;
      fake = await startPrimeFake({ createReplyDelayMs: 60_000 });
      restoreEnv = fake.useEnv();
    });
    after(async () => {
      restoreEnv();
      if (savedCache === undefined) delete process.env.VF_CACHE_DIR;
      else process.env.VF_CACHE_DIR = savedCache;
      await fake.close();
    });

    it("pending entries name every sandbox being created; gc deletes them all", async () => {
      const childEnv = { ...fake.env(), VF_CACHE_DIR: cache };
      await killDuringCreation("prime", childEnv, () => fake.sandboxes.size);
      assert.equal(fake.liveSandboxes(), CONCURRENCY, "the provider made them");
      const pending = listSandboxes().filter((e) => e.provider === "prime");
      assert.equal(pending.length, CONCURRENCY, JSON.stringify(pending));
      assert.ok(pending.every((e) => e.state === "pending" && e.name));

      fake.options.createReplyDelayMs = 0;
      const gc = await runCli(["sandboxes", "gc"], { env: childEnv });
      assert.equal(gc.code, 0, gc.stderr);
      assert.equal(gc.stdout.match(/^stopped prime /gm)?.length, CONCURRENCY, gc.stdout);
      assert.equal(fake.liveSandboxes(), 0, "nothing live after gc");
      assert.deepEqual(listSandboxes(), [], "the ledger is empty");
      const lists = fake.requests.filter((r) => r.kind === "list");
      assert.ok(lists.length >= CONCURRENCY, "looked up in Prime's listing");
      assert.ok(
        lists.every((r) => r.query.is_active === "true" && r.query.page === "1"),
        JSON.stringify(lists.map((r) => r.query)),
      );
    });
  });
});
