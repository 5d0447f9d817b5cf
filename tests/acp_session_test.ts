/**
 * runAcpSession() against a scripted ACP agent (the SDK's agent side, a real Node program
 * over stdio, tests/fixtures/acp/fake_agent.mjs) started by the local runtime: every way
 * an adapter can fail ends as a HarnessError within its timeout, carrying its last stderr
 * lines with secrets redacted, and leaves no process behind.
 */
import { after, afterEach, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import local from "../plugins/runtimes/local/mod.ts";
import { HarnessError } from "../kit/errors.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import { type AcpSessionOptions, runAcpSession } from "../kit/harness/acp/session.ts";
import { newAcpRecord } from "../kit/harness/acp/record.ts";
import { addSecret, clearSecretsForTests } from "../kit/secrets.ts";

const AGENT = join(import.meta.dirname!, "fixtures", "acp", "fake_agent.mjs");
const SECRET = "sk-acp-session-secret-98765";

let root: string;
let runtime: Runtime;
before(() => {
  root = mkdtempSync(join(tmpdir(), "vf-acp-session-"));
  addSecret(SECRET);
});
after(() => {
  clearSecretsForTests();
  rmSync(root, { recursive: true, force: true });
});
afterEach(async () => {
  await runtime?.stop();
});

/** Starts the fake agent in `mode` and runs one session; returns what happened. */
async function session(
  mode: string,
  options: Partial<AcpSessionOptions> = {},
) {
  runtime = local.create({ workdir_root: root }, { name: `acp-${mode}` });
  await runtime.start();
  const pidFile = join(root, `${mode}.pid`);
  const proc = await runtime.spawn!(["node", AGENT], {
    env: { FAKE_ACP_MODE: mode, FAKE_ACP_PID_FILE: pidFile, FAKE_ACP_SECRET: SECRET },
  });
  const record = options.record ?? newAcpRecord();
  const started = Date.now();
  let result, error;
  try {
    result = await runAcpSession(proc, {
      cwd: runtime.workdir,
      prompt: "hello",
      startTimeoutMs: 3000,
      signal: new AbortController().signal,
      record,
      name: "fake",
      ...options,
    });
  } catch (e) {
    error = e;
  }
  const pid = Number(readFileSync(pidFile, "utf8"));
  return { result, error, record, ms: Date.now() - started, alive: isAlive(pid) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Asserts a HarnessError whose message matches and quotes the agent's stderr, redacted. */
function assertHarnessError(error: unknown, pattern: RegExp): void {
  assert.ok(error instanceof HarnessError, String(error));
  assert.match(error.message, pattern);
  assert.match(error.message, /fake agent starting/, "the adapter's stderr is quoted");
  assert.ok(!error.message.includes(SECRET), "the key is redacted");
}

describe("runAcpSession", () => {
  it("runs a turn, resets the reply when messageId changes, and kills the adapter", async () => {
    const { result, error, record, alive } = await session("ok");
    assert.equal(error, undefined);
    assert.equal(result?.exitCode, 0);
    assert.equal(result?.stdout, "final answer");
    assert.equal(record.text, "final answer");
    assert.equal(record.stop_reason, "end_turn");
    assert.deepEqual(record.agent, { name: "fake-agent", version: "1.0.0" });
    assert.equal(record.updates.agent_message_chunk, 2);
    assert.equal(alive, false);
  });

  it("ends an initialize that never answers at the start timeout", async () => {
    const { error, ms, alive } = await session("no_init", { startTimeoutMs: 1500 });
    assertHarnessError(error, /ACP initialize got no answer within 1\.5s/);
    assert.ok(ms >= 1400 && ms < 6000, `took ${ms} ms`);
    assert.equal(alive, false);
  });

  it("ends a session/new that hangs at the start timeout", async () => {
    const { error, ms, alive } = await session("hang_new", { startTimeoutMs: 1500 });
    assertHarnessError(error, /ACP session\/new got no answer within 1\.5s/);
    assert.ok(ms < 6000, `took ${ms} ms`);
    assert.equal(alive, false);
  });

  it("ends malformed output as a start timeout, not a hang", async () => {
    const { error, alive } = await session("garbage", { startTimeoutMs: 1500 });
    assertHarnessError(error, /ACP initialize (got no answer|failed)/);
    assert.equal(alive, false);
  });

  it("reports an adapter that exits mid-prompt as a failed run with its stderr", async () => {
    const { result, error, record, alive } = await session("exit_prompt");
    assert.equal(error, undefined);
    assert.equal(result?.exitCode, 3);
    assert.match(result!.stderr, /exited with code 3 during session\/prompt/);
    assert.match(result!.stderr, /crashing mid-prompt/);
    assert.ok(!result!.stderr.includes(SECRET), "the key is redacted");
    assert.equal(record.text, "thinking out loud", "what came before the exit is kept");
    assert.equal(alive, false);
  });

  it("answers a permission request with allow by default", async () => {
    const { result, record } = await session("permission");
    assert.equal(result?.exitCode, 0);
    assert.deepEqual(record.permissions, [
      {
        tool_call: "t1",
        title: "rm -rf /",
        outcome: "selected",
        option: "yes",
        kind: "allow_once",
      },
    ]);
    assert.equal(record.tool_calls[0]?.status, "completed");
  });

  it("ends the rollout with a HarnessError when the config refuses a permission", async () => {
    const { error, record, ms, alive } = await session("permission", {
      permissions: "reject",
      cancelGraceMs: 500,
    });
    assertHarnessError(error, /permission refused for tool call "rm -rf \/"/);
    assert.equal(record.permissions[0]?.option, "no");
    assert.ok(ms < 5000, `took ${ms} ms`);
    assert.equal(alive, false);
  });

  it("cancels the prompt and kills the adapter when the rollout's signal aborts", async () => {
    const ctrl = new AbortController();
    const watched = newAcpRecord();
    // cut short once the agent is mid-turn (it has sent its first chunk)
    const poll = setInterval(() => {
      if (watched.updates.agent_message_chunk) ctrl.abort();
    }, 20);
    const { error, record, ms, alive } = await session("hang_prompt", {
      signal: ctrl.signal,
      cancelGraceMs: 300,
      record: watched,
    }).finally(() => clearInterval(poll));
    assertHarnessError(error, /session\/prompt cancelled: the rollout was stopped/);
    assert.equal(record.stop_reason, "cancelled");
    assert.ok(ms < 15_000, `took ${ms} ms`);
    assert.equal(alive, false);
  });

  it("reports a program that cannot start", async () => {
    runtime = local.create({ workdir_root: root }, { name: "acp-missing" });
    await runtime.start();
    const proc = await runtime.spawn!(["/nonexistent/adapter"]);
    await assert.rejects(
      runAcpSession(proc, {
        cwd: runtime.workdir,
        prompt: "hi",
        startTimeoutMs: 3000,
        signal: new AbortController().signal,
        record: newAcpRecord(),
        name: "missing",
      }),
      (e: unknown) => e instanceof HarnessError && /could not start/.test(e.message),
    );
  });
});
