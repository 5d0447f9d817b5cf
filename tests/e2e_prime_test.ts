import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { evalInProcess } from "./_eval.ts";
import { cliArgv, runCli } from "./_cli.ts";
import { type PrimeFake, startPrimeFake } from "./fakes/prime_server.ts";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { at } from "./_assert.ts";

let fake: PrimeFake;
let restoreEnv: () => void = () => {};
const made: string[] = [];
const saved = process.env.VF_CACHE_DIR;

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

function liveIds(): string[] {
  return [...fake.sandboxes.values()]
    .filter((s) => !s.reaped && !["ERROR", "TERMINATED", "TIMEOUT"].includes(s.status))
    .map((s) => s.id)
    .sort();
}

/** Runs `vf eval` as a child, sends SIGINT once `ready()` holds, and collects the outcome. */
function evalInterrupted(
  args: string[],
  env: Record<string, string>,
  ready: () => boolean,
): Promise<{ code: number | null; signal: string | null; stderr: string; interrupted: boolean }> {
  const [cmd, ...rest] = cliArgv(args);
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, rest, {
      env: { ...process.env, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let interrupted = false;
    child.stdout.resume();
    child.stderr.setEncoding("utf8").on("data", (d: string) => stderr += d);
    const poll = setInterval(() => {
      if (!interrupted && ready()) {
        interrupted = true;
        child.kill("SIGINT");
      }
    }, 10);
    const killer = setTimeout(() => child.kill("SIGKILL"), 120_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearInterval(poll);
      clearTimeout(killer);
      resolve({ code, signal, stderr, interrupted });
    });
  });
}

before(async () => {
  process.env.VF_CACHE_DIR = tempDir("vf-e2e-prime-cache-");
  fake = await startPrimeFake();
  restoreEnv = fake.useEnv();
});

after(async () => {
  restoreEnv();
  await fake.close();
  if (saved === undefined) delete process.env.VF_CACHE_DIR;
  else process.env.VF_CACHE_DIR = saved;
  for (const d of made) rmSync(d, { recursive: true, force: true });
});

describe("end to end on the Prime fake", () => {
  it("scores 1 on every shell-basics task with the oracle and leaves nothing running", async () => {
    const creates = fake.count("create");
    const { episodes, summary } = await evalInProcess([
      "shell-basics",
      "-m",
      "oracle",
      "-c",
      "10",
      "--env.agent.runtime.type",
      "prime",
      "--env.agent.runtime.timeout",
      "600",
    ]);
    assert.equal(episodes.length, 10);
    for (const ep of episodes) {
      const t = at(ep.traces, 0);
      assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
      assert.equal(t.rewards.passed?.score, 1, `${t.task.data.name}: ${JSON.stringify(t.rewards)}`);
      assert.equal(t.agent.runtime.id?.startsWith("fk"), true);
    }
    assert.equal(summary.error_fraction, 0);
    assert.equal(fake.count("create"), creates + 10);
    assert.equal(fake.liveSandboxes(), 0);
    assert.deepEqual(listSandboxes(), []);
  });

  it("refuses an idle timeout above the lifetime before any sandbox is made (exit 2)", async () => {
    const creates = fake.count("create");
    const r = await runCli([
      "eval",
      "shell-basics",
      "-m",
      "oracle",
      "-o",
      tempDir("vf-e2e-prime-bad-"),
      "--env.agent.runtime.type",
      "prime",
      "--env.agent.runtime.timeout",
      "120",
      "--env.agent.runtime.idle-timeout",
      "300",
    ], { env: { ...fake.env(), VF_CACHE_DIR: tempDir("vf-e2e-prime-bad-cache-") } });
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /idle_timeout \(300s\) must not exceed the hard sandbox timeout \(120s\)/,
    );
    assert.equal(fake.count("create"), creates);
  });

  it("SIGINT mid-run stops every sandbox it started", async () => {
    const cache = tempDir("vf-e2e-prime-sigint-");
    const out = tempDir("vf-e2e-prime-out-");
    const creates = fake.count("create");
    fake.options.readsUntilRunning = 2; // starts take a few poll rounds
    try {
      const r = await evalInterrupted(
        [
          "eval",
          "shell-basics",
          "-m",
          "oracle",
          "-c",
          "10",
          "-o",
          out,
          "--env.agent.runtime.type",
          "prime",
        ],
        { ...fake.env(), VF_CACHE_DIR: cache },
        () => fake.count("create") >= creates + 3,
      );
      assert.equal(r.interrupted, true, r.stderr);
      // a cancelled run ends with 130, or by re-raising the signal
      assert.ok(r.code === 130 || r.signal === "SIGINT", `${r.code} ${r.signal}: ${r.stderr}`);
    } finally {
      fake.options.readsUntilRunning = 0;
    }
    assert.ok(fake.count("create") > creates);
    assert.deepEqual(liveIds(), []);
    process.env.VF_CACHE_DIR = cache;
    assert.deepEqual(listSandboxes(), []);
  });

  it("SIGINT with failing deletes leaves ledger entries naming exactly the live sandboxes", async () => {
    const cache = tempDir("vf-e2e-prime-sigint2-");
    const out = tempDir("vf-e2e-prime-out2-");
    const creates = fake.count("create");
    fake.options.readsUntilRunning = 2;
    fake.fault({
      kind: "delete",
      respond: { status: 500, body: { detail: "down" } },
      times: 10_000,
    });
    let stderr = "";
    try {
      const r = await evalInterrupted(
        [
          "eval",
          "shell-basics",
          "-m",
          "oracle",
          "-c",
          "4",
          "-o",
          out,
          "--env.agent.runtime.type",
          "prime",
        ],
        { ...fake.env(), VF_CACHE_DIR: cache },
        () => fake.count("create") >= creates + 2,
      );
      stderr = r.stderr;
      assert.equal(r.interrupted, true, r.stderr);
      // a cancelled run ends with 130, or by re-raising the signal
      assert.ok(r.code === 130 || r.signal === "SIGINT", `${r.code} ${r.signal}: ${r.stderr}`);
    } finally {
      fake.options.readsUntilRunning = 0;
      fake.clearFaults();
    }
    process.env.VF_CACHE_DIR = cache;
    const left = liveIds();
    assert.ok(left.length >= 2, `sandboxes left: ${left}`);
    assert.deepEqual(listSandboxes().map((e) => e.id).sort(), left);
    for (const id of left) {
      assert.match(stderr, new RegExp(`not confirmed stopped: prime ${id}`));
    }

    const gc = await runCli(["sandboxes", "gc"], { env: { ...fake.env(), VF_CACHE_DIR: cache } });
    assert.equal(gc.code, 0, gc.stderr);
    assert.deepEqual(liveIds(), []);
    assert.deepEqual(listSandboxes(), []);
  });
});
