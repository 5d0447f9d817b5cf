import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { closeModalConnections } from "../plugins/runtimes/modal/mod.ts";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { evalInProcess } from "./_eval.ts";
import { cliArgv } from "./_cli.ts";
import { setupModalEnv } from "./fakes/modal_env.ts";
import type { ModalTestEnv } from "./fakes/modal_env.ts";

let env: ModalTestEnv;

before(async () => {
  env = await setupModalEnv();
});

after(async () => {
  closeModalConnections();
  await env.dispose();
});

describe("vf eval on the modal fake", () => {
  it("scores 1 on every shell-basics task with the oracle and leaves no sandbox behind", async () => {
    const { fake } = env;
    const { episodes, summary } = await evalInProcess([
      "shell-basics",
      "-m",
      "oracle",
      "-c",
      "4",
      "--env.agent.runtime.type",
      "modal",
    ]);
    assert.ok(episodes.length >= 10, `only ${episodes.length} episodes`);
    const ids = new Set<string>();
    for (const ep of episodes) {
      const t = ep.traces[0]!;
      assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
      assert.equal(t.agent.runtime.type, "modal");
      assert.match(String(t.agent.runtime.id), /^sb-/);
      ids.add(String(t.agent.runtime.id));
      const weighted = Object.values(t.rewards).filter((r) => r && r.weight > 0);
      assert.ok(weighted.length > 0);
      for (const r of weighted) {
        assert.equal(r!.score, 1, `${t.task.data.name}: ${JSON.stringify(t.rewards)}`);
      }
    }
    assert.equal(summary.error_fraction, 0);
    assert.equal(ids.size, episodes.length, "one sandbox per rollout");
    assert.equal(fake.callsOf("SandboxCreate").length, episodes.length);
    for (const id of ids) {
      assert.equal(fake.sandbox(id)?.result?.status, 3, `sandbox ${id} terminated`);
    }
    assert.equal(fake.liveSandboxes(), 0);
    assert.deepEqual(listSandboxes(), [], "the ledger is empty");
  });

  it("a SIGINT mid-run leaves no live sandbox that the ledger does not name", async () => {
    const { fake } = env;
    fake.knobs.createDelayMs = 200;
    const creates = fake.callsOf("SandboxCreate").length;
    const out = mkdtempSync(join(tmpdir(), "vf-e2e-modal-"));
    const [cmd, ...args] = cliArgv([
      "eval",
      "shell-basics",
      "-m",
      "oracle",
      "-c",
      "3",
      "--env.agent.runtime.type",
      "modal",
      "-o",
      out,
      "--display",
      "none",
    ]);
    const child = spawn(cmd!, args, {
      cwd: out,
      env: { ...process.env, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => stderr += d);
    child.stdout.resume();
    const exited = new Promise<string>((r) =>
      child.on("close", (code, signal) => r(signal ?? `exit ${code}`))
    );
    try {
      await Promise.race([
        fake.waitForCalls("SandboxCreate", creates + 2),
        exited.then(() => assert.fail(`vf eval ended before the SIGINT:\n${stderr}`)),
      ]);
      child.kill("SIGINT");
      const how = await exited;
      assert.notEqual(how, "SIGKILL", stderr);
      assert.match(stderr, /SIGINT/);
    } finally {
      fake.knobs.createDelayMs = 0;
      if (child.exitCode === null) child.kill("SIGKILL");
    }
    const live = fake.sandboxIds().filter((id) => fake.sandbox(id)?.result === null).sort();
    const ledger = listSandboxes().filter((e) => e.provider === "modal").map((e) => e.id).sort();
    assert.deepEqual(live, ledger, `live sandboxes are exactly the ledger's:\n${stderr}`);
    assert.deepEqual(live, [], `every sandbox was confirmed stopped:\n${stderr}`);
  });
});
