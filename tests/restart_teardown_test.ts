/**
 * Restart teardown: a runtime whose last sandbox was confirmed stopped, started again, and
 * failing before the new sandbox is fully recorded, must still free what the new start
 * holds — the new sandbox (Modal) or the new client (Prime) — instead of reporting the old
 * confirmed stop.
 */
import assert from "node:assert/strict";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { ledgerDir, listSandboxes } from "../kit/runtime/ledger.ts";
import {
  closeModalConnections,
  ModalRuntime,
  ModalRuntimeConfig,
} from "../plugins/runtimes/modal/mod.ts";
import { resolvePrimeConfig } from "../plugins/runtimes/prime/config.ts";
import { PrimeRuntime } from "../plugins/runtimes/prime/runtime.ts";
import { setupModalEnv } from "./fakes/modal_env.ts";
import type { ModalTestEnv } from "./fakes/modal_env.ts";
import { type PrimeFake, startPrimeFake } from "./fakes/prime_server.ts";

describe("modal: a restart that fails between creation and recording its id", () => {
  let env: ModalTestEnv;
  before(async () => {
    env = await setupModalEnv();
  });
  after(async () => {
    closeModalConnections();
    await env.dispose();
  });

  it("stopConfirmed() terminates the new sandbox instead of reporting the old stop", async () => {
    const { fake } = env;
    const rt = new ModalRuntime(ModalRuntimeConfig.parse({}), { name: "restart-a" });
    await rt.start();
    await rt.stopConfirmed();
    assert.equal(fake.liveSandboxes(), 0);

    // The ledger becomes unwritable while the second create is answered.
    const dir = ledgerDir();
    const moved = `${dir}.moved`;
    fake.knobs.createReplyDelayMs = 300;
    const creates = fake.callsOf("SandboxCreate").length;
    const restart = rt.start();
    restart.catch(() => {});
    await fake.waitForCalls("SandboxCreate", creates + 1);
    renameSync(dir, moved);
    writeFileSync(dir, "not a directory");
    try {
      await assert.rejects(restart);
    } finally {
      fake.knobs.createReplyDelayMs = 0;
      rmSync(dir, { force: true });
      renameSync(moved, dir);
    }
    assert.equal(fake.liveSandboxes(), 1, "the new sandbox exists");
    await rt.stopConfirmed();
    assert.equal(fake.liveSandboxes(), 0, "stopConfirmed() terminated it");
    assert.equal(rt.stopped, true);
    assert.deepEqual(listSandboxes(), [], "no entry left");
  });
});

describe("prime: a restart that fails before an id exists", () => {
  let fake: PrimeFake;
  let restoreEnv: () => void = () => {};
  const savedCache = process.env.VF_CACHE_DIR;
  before(async () => {
    process.env.VF_CACHE_DIR = mkdtempSync(join(tmpdir(), "vf-restart-cache-"));
    fake = await startPrimeFake();
    restoreEnv = fake.useEnv();
  });
  after(async () => {
    restoreEnv();
    if (savedCache === undefined) delete process.env.VF_CACHE_DIR;
    else process.env.VF_CACHE_DIR = savedCache;
    await fake.close();
  });

  it("stopConfirmed() releases the new client and says no id exists", async () => {
    const rt = new PrimeRuntime(resolvePrimeConfig({}), "restart-b", {
      creation: { baseDelayMs: 10, maxDelayMs: 40, imageBuildPollMs: 20, budgetMs: 20_000 },
      client: { backoffScale: 0.001 },
      settings: { baseUrl: fake.url, apiKey: fake.apiKey, teamId: null },
    });
    await rt.start();
    await rt.stopConfirmed();
    assert.equal(rt.hasClient, false);

    fake.fault({ kind: "create", respond: { status: 400, body: { detail: "bad request" } } });
    await assert.rejects(rt.start(), /prime sandbox provisioning failed/);
    assert.equal(rt.hasClient, true, "the failed start holds its client");
    await assert.rejects(rt.stopConfirmed(), /without a provider ID/);
    assert.equal(rt.hasClient, false, "the client was released");
    assert.equal(fake.liveSandboxes(), 0);
    assert.deepEqual(listSandboxes(), [], "a refused create leaves no pending entry");
  });
});
