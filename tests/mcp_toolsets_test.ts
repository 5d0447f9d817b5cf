/**
 * MCP toolsets through the `bash` harness, end to end: a TypeScript toolset run with the
 * rollout, the same toolset as an MCP server the rollout starts (stdio) and as one the test
 * started (streamable HTTP on 127.0.0.1). A scripted model on loopback calls its tools; the
 * calls land in the trace and the reward reads the toolset's state.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evalInProcess } from "./_eval.ts";
import { type FakeOpenAI, type FakeReply, startFakeOpenAI } from "./fakes/openai_server.ts";
import { alive, serverArgv } from "./fixtures/mcp/notes_taskset.ts";
import { at } from "./_assert.ts";
import type { Trace } from "../kit/trace/types.ts";
import type { ToolCallRecord } from "../kit/harness/tools.ts";

const TASKSET = join(import.meta.dirname!, "fixtures", "mcp", "notes_taskset.ts");
const KEY_VAR = "VF_MCP_TEST_KEY";

/** Stores alpha and beta, lists them, then answers. */
// deno-lint-ignore no-explicit-any
function notesScript(body: Record<string, any>, index: number): FakeReply {
  const names: string[] = (body.tools ?? []).map((t: { function: { name: string } }) =>
    t.function.name
  );
  if (!names.includes("notes_add")) return { content: `no notes tools: ${names.join(",")}` };
  if (index === 0) {
    return {
      tool_calls: [
        { name: "bash", arguments: { command: "echo hi" } },
        { name: "notes_add", arguments: { text: "alpha" } },
        { name: "notes_add", arguments: { text: "beta" } },
      ],
    };
  }
  if (index === 1) return { tool_calls: [{ name: "notes_list", arguments: {} }] };
  if (index === 2) return { tool_calls: [{ name: "notes_fail", arguments: { reason: "nope" } }] };
  return { content: "done" };
}

describe("MCP toolsets through the bash harness", () => {
  let fake: FakeOpenAI;
  let pidDir: string;
  before(() => {
    process.env[KEY_VAR] = "sk-unused";
    pidDir = mkdtempSync(join(tmpdir(), "vf-mcp-pids-"));
  });
  after(() => {
    delete process.env[KEY_VAR];
    rmSync(pidDir, { recursive: true, force: true });
  });

  async function runNotes(mode: string, extra: string[] = []): Promise<Trace> {
    fake = await startFakeOpenAI({ script: notesScript });
    try {
      const { episodes } = await evalInProcess([
        TASKSET,
        "--env.taskset.mode",
        mode,
        "--env.taskset.pid-dir",
        pidDir,
        ...extra,
        "--env.agent.harness.id",
        "bash",
        "-m",
        "scripted",
        "--client.base-url",
        fake.url,
        "--client.api-key-var",
        KEY_VAR,
      ]);
      return at(at(episodes, 0).traces, 0);
    } finally {
      await fake.close();
    }
  }

  function checkNotesTrace(trace: Trace): void {
    assert.equal(trace.ok, true, JSON.stringify(trace.errors));
    assert.deepEqual(trace.rewards.stored, { score: 1, weight: 1 });
    const advertised = trace.tools.map((t) => t.name);
    for (const name of ["bash", "edit", "notes_add", "notes_list", "notes_fail"]) {
      assert.ok(advertised.includes(name), `${name} in ${advertised.join(",")}`);
    }
    const add = trace.tools.find((t) => t.name === "notes_add");
    assert.deepEqual(
      (add?.parameters as { properties?: unknown } | null)?.properties,
      { text: { type: "string", minLength: 1, description: "The note." } },
    );
    const calls = trace.info.tool_calls as ToolCallRecord[];
    assert.deepEqual(
      calls.map((c) => [c.name, JSON.parse(c.arguments), c.result, c.error]),
      [
        ["bash", { command: "echo hi" }, "hi\n", null],
        ["notes_add", { text: "alpha" }, "stored 1", null],
        ["notes_add", { text: "beta" }, "stored 2", null],
        ["notes_list", {}, "alpha\nbeta", null],
        ["notes_fail", { reason: "nope" }, "Error: nope", "nope"],
      ],
    );
    for (const c of calls) assert.ok(c.duration >= 0 && c.duration < 30, String(c.duration));
    // the model saw each result as a tool message, in the trace's nodes
    const toolMessages = trace.nodes.filter((n) => n.message.role === "tool")
      .map((n) => n.message.content);
    assert.deepEqual(toolMessages, ["hi\n", "stored 1", "stored 2", "alpha\nbeta", "Error: nope"]);
    assert.equal(trace.calls.length, 4);
  }

  it("runs a TypeScript toolset with the rollout; the reward reads its state", async () => {
    checkNotesTrace(await runNotes("inline"));
  });

  it("starts the same toolset as a stdio MCP server and stops it after the rollout", async () => {
    const before = new Set(readdirSync(pidDir));
    checkNotesTrace(await runNotes("stdio"));
    const started = readdirSync(pidDir).filter((p) => !before.has(p)).map(Number);
    assert.equal(started.length, 1);
    for (const pid of started) assert.equal(alive(pid), false, `server ${pid} left running`);
  });

  it("reaches the same toolset at a streamable HTTP URL, one state per rollout", async () => {
    const [cmd, ...args] = serverArgv("notes", "http") as [string, ...string[]];
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = "";
        child.stdout.setEncoding("utf8");
        child.stdout.on("data", (c: string) => {
          out += c;
          const line = out.split("\n")[0];
          if (out.includes("\n") && line) resolve(line.trim());
        });
        child.once("exit", (code) => reject(new Error(`server exited ${code}`)));
      });
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      // two runs against one server: each rollout's session starts from an empty state
      checkNotesTrace(await runNotes("url", ["--env.taskset.url", url]));
      checkNotesTrace(await runNotes("url", ["--env.taskset.url", url]));
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) =>
        child.exitCode !== null ? resolve(null) : child.once("exit", resolve)
      );
    }
  });

  it("disabled_tools hides a toolset tool and the edit tool from the model", async () => {
    const trace = await runNotes("inline", [
      "--env.agent.harness.disabled-tools",
      '["notes_fail","edit"]',
    ]);
    const advertised = trace.tools.map((t) => t.name);
    assert.deepEqual(advertised.sort(), ["bash", "notes_add", "notes_list"]);
    const calls = trace.info.tool_calls as ToolCallRecord[];
    const last = at(calls, calls.length - 1);
    assert.equal(last.name, "notes_fail");
    assert.match(last.error ?? "", /^unknown tool 'notes_fail'/);
    assert.deepEqual(trace.rewards.stored, { score: 1, weight: 1 });
  });
});
