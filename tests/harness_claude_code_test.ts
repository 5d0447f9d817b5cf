/**
 * The `claude-code` harness end to end with the real packages (Claude Code 2.1.332 and
 * claude-agent-acp 0.101.0) against a strict scripted Anthropic Messages provider: one Bash
 * tool call, then an answer. Skipped, with one line, when the agent install is not in the
 * host cache (`scripts/ci_agents.sh claude-code` puts it there).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import claude from "../plugins/harnesses/claude-code/mod.ts";
import { isInstalled } from "../kit/harness/acp/install.ts";
import type { AcpRecord } from "../kit/harness/acp/record.ts";
import { evalInProcess } from "./_eval.ts";
import { lastReply, numTurns } from "../kit/trace/derived.ts";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic_server.ts";
import { realPythonUnavailable, runRealPython } from "./_python_v1.ts";
import { at } from "./_assert.ts";

const KEY_VAR = "VF_CLAUDE_TEST_KEY";
const KEY = "sk-ant-claude-e2e-secret-0123456789";
const missing = isInstalled(claude.agentBundle!)
  ? null
  : "Claude Code is not in the agent cache (run scripts/ci_agents.sh claude-code)";
if (missing) console.log(`harness_claude_code_test: skipped: ${missing}`);

type Json = Record<string, unknown>;

/** True when a request carries a tool result. */
function hasToolResult(body: Json): boolean {
  return (body.messages as { content: unknown }[]).some((m) =>
    Array.isArray(m.content) &&
    m.content.some((b: { type?: string }) => b.type === "tool_result")
  );
}

/** The model: Bash first, then (after its result) the answer; other calls get a title. */
function script(body: Json) {
  const tools = (body.tools as { name: string }[] | undefined) ?? [];
  if (!tools.some((t) => t.name === "Bash")) return { text: '{"title": "Proof file"}' };
  if (hasToolResult(body)) return { text: "Done. The answer is 42." };
  return {
    tool_use: [{
      id: "toolu_proof",
      name: "Bash",
      input: { command: "echo acp-ok > proof.txt && pwd && cat proof.txt", description: "proof" },
    }],
  };
}

describe("claude-code harness (real agent over ACP)", { skip: missing ?? false }, () => {
  let fake: FakeAnthropic;
  let dir: string;
  before(async () => {
    process.env[KEY_VAR] = KEY;
    fake = await startFakeAnthropic({ apiKey: KEY, script });
    dir = mkdtempSync(join(tmpdir(), "vf-claude-e2e-"));
    writeFileSync(
      join(dir, "tasks.jsonl"),
      JSON.stringify({ prompt: "Write acp-ok to proof.txt, then say the answer.", answer: "42" }) +
        "\n",
    );
  });
  after(async () => {
    delete process.env[KEY_VAR];
    await fake?.close();
  });

  it("runs Bash in the rollout's directory and records the calls and the tool call", async () => {
    const config = join(dir, "claude.toml");
    writeFileSync(
      config,
      `model = "claude-test"
[client]
base_url = ${JSON.stringify(fake.url)}
api_key_var = "${KEY_VAR}"
[env.taskset]
id = "jsonl"
path = ${JSON.stringify(join(dir, "tasks.jsonl"))}
[[env.taskset.task.judges]]
id = "match"
mode = "contains"
[env.agent.harness]
id = "claude-code"
[env.agent.runtime]
type = "subprocess"
[env.agent.timeout]
rollout = 180
`,
    );
    const { episodes, lines } = await evalInProcess(["@", config]);
    const trace = at(at(episodes, 0).traces, 0);
    assert.deepEqual(trace.errors, [], JSON.stringify(trace.errors));
    const acp = trace.info.acp as AcpRecord;
    assert.equal(
      acp.agent.name,
      "@agentclientprotocol/claude-agent-acp",
      JSON.stringify(acp.agent),
    );
    assert.equal(acp.stop_reason, "end_turn");
    assert.equal(acp.text.trim(), "Done. The answer is 42.");
    const bash = acp.tool_calls.filter((c) => c.kind === "execute");
    assert.equal(bash.length, 1, JSON.stringify(acp.tool_calls));
    assert.equal(at(bash, 0).status, "completed");
    const workdir = trace.agent.runtime.id!;
    const toolTurn = fake.requests.find((r) => hasToolResult(r.body));
    assert.ok(JSON.stringify(toolTurn?.body.messages).includes(`${workdir}\\nacp-ok`));
    // the session title is recorded but marked: it is neither a turn nor the answer
    const titles = trace.calls.filter((c) => c.auxiliary === "session_title");
    assert.equal(titles.length, 1, JSON.stringify(trace.calls));
    const own = trace.calls.filter((c) => c.auxiliary === undefined && c.error === null);
    assert.deepEqual(own.map((c) => c.finish_reason), ["tool_calls", "stop"]);
    assert.equal(numTurns(trace), 2);
    assert.equal(lastReply(trace), "Done. The answer is 42.");
    assert.equal(trace.rewards.match?.score, 1, JSON.stringify(trace.rewards));
    for (const r of fake.requests) assert.equal(r.headers["x-api-key"], KEY);
    assert.ok(!at(lines, 0).includes(KEY), "the key never reaches the trace");
    if (realPythonUnavailable() === null) {
      const [answer] = runRealPython([{ kind: "episode", value: JSON.parse(at(lines, 0)) }]);
      assert.ok(answer?.ok, answer?.error);
    }
  });
  it("copies the skills to where Claude Code reads them, and it offers them to the model", async () => {
    const skill = join(dir, "skills", "proof-writer");
    mkdirSync(skill, { recursive: true });
    writeFileSync(
      join(skill, "SKILL.md"),
      "---\nname: proof-writer\ndescription: Writes proof files for the acp skill test.\n---\n" +
        "Write the proof.\n",
    );
    const config = join(dir, "claude-code-skills.toml");
    writeFileSync(
      config,
      `model = "claude-test"
[client]
base_url = ${JSON.stringify(fake.url)}
api_key_var = "${KEY_VAR}"
[env.taskset]
id = "jsonl"
path = ${JSON.stringify(join(dir, "tasks.jsonl"))}
[env.agent.harness]
id = "claude-code"
skills = [${JSON.stringify(skill)}]
[env.agent.timeout]
rollout = 180
`,
    );
    const before = fake.requests.length;
    const { episodes } = await evalInProcess(["@", config]);
    const trace = at(at(episodes, 0).traces, 0);
    assert.deepEqual(trace.errors, [], JSON.stringify(trace.errors));
    const sent = fake.requests.slice(before).map((r) => JSON.stringify(r.body));
    assert.ok(
      sent.some((b) => b.includes("Writes proof files for the acp skill test.")),
      "the skill is offered to the model",
    );
  });
});
