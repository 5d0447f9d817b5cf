/**
 * The `codex` harness end to end with the real packages (Codex 0.171.0 and codex-acp 2.6.0)
 * against a strict scripted Responses provider: one shell tool call, then an answer.
 * Skipped, with one line, when the agent install is not in the host cache
 * (`scripts/ci_agents.sh codex` puts it there).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import codex from "../plugins/harnesses/codex/mod.ts";
import { isInstalled } from "../kit/harness/acp/install.ts";
import type { AcpRecord } from "../kit/harness/acp/record.ts";
import { evalInProcess } from "./_eval.ts";
import { type FakeResponses, startFakeResponses } from "./fakes/responses_server.ts";
import { realPythonUnavailable, runRealPython } from "./_python_v1.ts";
import { at } from "./_assert.ts";

const KEY_VAR = "VF_CODEX_TEST_KEY";
const KEY = "sk-codex-e2e-secret-0123456789";
const missing = isInstalled(codex.agentBundle!)
  ? null
  : "Codex is not in the agent cache (run scripts/ci_agents.sh codex)";
if (missing) console.log(`harness_codex_test: skipped: ${missing}`);

type Json = Record<string, unknown>;
const COMMAND = "echo acp-ok > proof.txt && pwd && cat proof.txt";

/** True when the request carries a tool's output. */
function hasToolOutput(body: Json): boolean {
  const input = body.input;
  return Array.isArray(input) &&
    input.some((i: { type?: string }) => i.type === "function_call_output");
}

/** The model: the shell tool first, then (after its output) the answer. */
function script(body: Json) {
  const tools = ((body.tools as { name?: string }[] | undefined) ?? []).map((t) => t.name);
  if (hasToolOutput(body)) return "Done. The answer is 42.";
  if (tools.includes("exec_command")) {
    return { calls: [{ name: "exec_command", arguments: { cmd: COMMAND } }] };
  }
  if (tools.includes("shell")) {
    return { calls: [{ name: "shell", arguments: { command: ["bash", "-lc", COMMAND] } }] };
  }
  return "A title";
}

describe("codex harness (real agent over ACP)", { skip: missing ?? false }, () => {
  let fake: FakeResponses;
  let dir: string;
  before(async () => {
    process.env[KEY_VAR] = KEY;
    fake = await startFakeResponses({ apiKey: KEY, script });
    dir = mkdtempSync(join(tmpdir(), "vf-codex-e2e-"));
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

  it("runs the shell tool in the rollout's directory and records the calls", async () => {
    const config = join(dir, "codex.toml");
    writeFileSync(
      config,
      `model = "codex-test"
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
id = "codex"
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
    assert.equal(acp.stop_reason, "end_turn");
    assert.equal(acp.text.trim(), "Done. The answer is 42.");
    const workdir = trace.agent.runtime.id!;
    const toolTurn = fake.requests.find((r) => hasToolOutput(r.body));
    assert.ok(
      JSON.stringify(toolTurn?.body.input).includes(`${workdir}\\nacp-ok`),
      JSON.stringify(toolTurn?.body.input).slice(-2000),
    );
    assert.ok(acp.tool_calls.length >= 1, JSON.stringify(acp.tool_calls));
    assert.equal(trace.rewards.match?.score, 1, JSON.stringify(trace.rewards));
    for (const r of fake.requests) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    assert.ok(!at(lines, 0).includes(KEY), "the key never reaches the trace");
    if (realPythonUnavailable() === null) {
      const [answer] = runRealPython([{ kind: "episode", value: JSON.parse(at(lines, 0)) }]);
      assert.ok(answer?.ok, answer?.error);
    }
  });
  it("copies the skills to where Codex reads them, and it offers them to the model", async () => {
    const skill = join(dir, "skills", "proof-writer");
    mkdirSync(skill, { recursive: true });
    writeFileSync(
      join(skill, "SKILL.md"),
      "---\nname: proof-writer\ndescription: Writes proof files for the acp skill test.\n---\n" +
        "Write the proof.\n",
    );
    const config = join(dir, "codex-skills.toml");
    writeFileSync(
      config,
      `model = "codex-test"
[client]
base_url = ${JSON.stringify(fake.url)}
api_key_var = "${KEY_VAR}"
[env.taskset]
id = "jsonl"
path = ${JSON.stringify(join(dir, "tasks.jsonl"))}
[env.agent.harness]
id = "codex"
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
