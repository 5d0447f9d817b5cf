/**
 * Toolset servers that fail: one that crashes during a call, one whose tool hangs, one
 * that writes a line that is not JSON-RPC, and one that never answers initialize. Each
 * call gives the model an error result recorded on the trace (the first three rollouts
 * still finish), or a ToolsetError ends the rollout in time; no server is left running.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evalInProcess } from "./_eval.ts";
import { type FakeReply, startFakeOpenAI } from "./fakes/openai_server.ts";
import { alive } from "./fixtures/mcp/notes_taskset.ts";
import { at } from "./_assert.ts";
import type { Trace } from "../kit/trace/types.ts";
import type { ToolCallRecord } from "../kit/harness/tools.ts";

const TASKSET = join(import.meta.dirname!, "fixtures", "mcp", "notes_taskset.ts");
const KEY_VAR = "VF_MCP_FAULTS_KEY";

describe("toolset server faults", () => {
  let pidDir: string;
  before(() => {
    process.env[KEY_VAR] = "sk-unused";
    pidDir = mkdtempSync(join(tmpdir(), "vf-mcp-faults-"));
  });
  after(() => {
    delete process.env[KEY_VAR];
    rmSync(pidDir, { recursive: true, force: true });
  });

  /** One rollout whose model calls `tools` in turn (one per reply), then answers. */
  async function run(mode: string, tools: string[]): Promise<{ trace: Trace; pids: number[] }> {
    const before = new Set(readdirSync(pidDir));
    const fake = await startFakeOpenAI({
      script: (_body, index): FakeReply =>
        index < tools.length
          ? { tool_calls: [{ name: at(tools, index), arguments: {} }] }
          : { content: "gave up" },
    });
    try {
      const { episodes } = await evalInProcess([
        TASKSET,
        "--env.taskset.mode",
        mode,
        "--env.taskset.pid-dir",
        pidDir,
        "--env.agent.harness.id",
        "bash",
        "--env.agent.harness.tool-timeout",
        "1.5",
        "-m",
        "scripted",
        "--client.base-url",
        fake.url,
        "--client.api-key-var",
        KEY_VAR,
      ]);
      const pids = readdirSync(pidDir).filter((p) => !before.has(p)).map(Number);
      return { trace: at(at(episodes, 0).traces, 0), pids };
    } finally {
      await fake.close();
    }
  }

  function errorsOf(trace: Trace): (string | null)[] {
    return (trace.info.tool_calls as ToolCallRecord[]).map((c) => c.error);
  }

  function noneLeft(pids: number[]): void {
    assert.equal(pids.length, 1, "one server was started");
    for (const pid of pids) assert.equal(alive(pid), false, `server ${pid} left running`);
  }

  it("a server that crashes mid-call: error results, the rollout ends", async () => {
    const { trace, pids } = await run("faults", ["faults_crash", "faults_hang"]);
    assert.equal(trace.ok, true, JSON.stringify(trace.errors));
    const [crash, next] = errorsOf(trace);
    assert.match(crash ?? "", /Connection closed/i);
    assert.match(next ?? "", /gone|not connected|closed/i);
    const results = trace.nodes.filter((n) => n.message.role === "tool")
      .map((n) => String(n.message.content));
    assert.equal(results.length, 2);
    for (const r of results) assert.match(r, /^Error: /);
    noneLeft(pids);
  });

  it("a tool that hangs: a timeout error after tool_timeout, the server is stopped", async () => {
    const started = Date.now();
    const { trace, pids } = await run("faults", ["faults_hang"]);
    assert.equal(trace.ok, true, JSON.stringify(trace.errors));
    assert.match(at(errorsOf(trace), 0) ?? "", /timed out/i);
    const call = at(trace.info.tool_calls as ToolCallRecord[], 0);
    assert.ok(call.duration >= 1.4 && call.duration < 10, String(call.duration));
    assert.ok(Date.now() - started < 30_000);
    noneLeft(pids);
  });

  it("a server that writes malformed JSON-RPC: an error result at once", async () => {
    const { trace, pids } = await run("faults", ["faults_garbage"]);
    assert.equal(trace.ok, true, JSON.stringify(trace.errors));
    assert.match(at(errorsOf(trace), 0) ?? "", /malformed message from the server/);
    const call = at(trace.info.tool_calls as ToolCallRecord[], 0);
    assert.ok(call.duration < 1.4, `answered before the timeout (${call.duration}s)`);
    noneLeft(pids);
  });

  it("a server that never answers initialize: a ToolsetError within its start timeout", async () => {
    const { trace, pids } = await run("silent", []);
    assert.equal(trace.ok, false);
    const e = at(trace.errors, 0);
    assert.equal(e.type, "ToolsetError");
    assert.match(e.message, /toolset 'silent' failed to start: .*timed out/i);
    assert.equal(trace.calls.length, 0, "the model was never called");
    noneLeft(pids);
  });
});
