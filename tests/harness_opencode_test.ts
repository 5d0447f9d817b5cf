/**
 * The `opencode` harness end to end with the real package (opencode-ai 1.18.33, its native
 * binary, `opencode acp`) against a strict scripted chat completions model: one bash tool
 * call, then an answer; OpenCode's session-title call (no tools) gets a title. Skipped,
 * with one line, when the agent install is not in the host cache
 * (`scripts/ci_agents.sh opencode` puts it there).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import opencode from "../plugins/harnesses/opencode/mod.ts";
import { isInstalled } from "../kit/harness/acp/install.ts";
import type { AcpRecord } from "../kit/harness/acp/record.ts";
import { lastReply, numTurns } from "../kit/trace/derived.ts";
import { evalInProcess } from "./_eval.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { realPythonUnavailable, runRealPython } from "./_python_v1.ts";
import { at } from "./_assert.ts";

const KEY_VAR = "VF_OPENCODE_TEST_KEY";
const KEY = "sk-opencode-e2e-secret-0123456789";
const missing = isInstalled(opencode.agentBundle!) ? null : "OpenCode is not in the agent " +
  "cache (run scripts/ci_agents.sh opencode)";
if (missing) console.log(`harness_opencode_test: skipped: ${missing}`);

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;
// deno-lint-ignore no-explicit-any
type Body = Record<string, any>;

/** The tool names a request offers. */
function toolNames(body: Body): string[] {
  return ((body.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
}

/** The model: bash first, then (after its result) the answer; a call with no tools: a title. */
function script(body: Body) {
  if (toolNames(body).length === 0) return "Proof file";
  if ((body.messages as { role: string }[]).some((m) => m.role === "tool")) {
    return "Done. The answer is 42.";
  }
  return {
    tool_calls: [{
      name: "bash",
      arguments: {
        command: "echo acp-ok > proof.txt && pwd && cat proof.txt",
        description: "Writes the proof",
      },
    }],
  };
}

function toml(fake: Fake, tasks: string, harness: string): string {
  return `model = "test-model"
[client]
base_url = ${JSON.stringify(fake.url)}
api_key_var = "${KEY_VAR}"
[env.taskset]
id = "jsonl"
path = ${JSON.stringify(tasks)}
[[env.taskset.task.judges]]
id = "match"
mode = "contains"
[env.agent.harness]
id = "opencode"
${harness}
[env.agent.runtime]
type = "subprocess"
[env.agent.timeout]
rollout = 120
`;
}

describe("opencode harness (real agent over ACP)", { skip: missing ?? false }, () => {
  let fake: Fake;
  let dir: string;
  before(async () => {
    process.env[KEY_VAR] = KEY;
    fake = await startFakeOpenAI({ apiKey: KEY, script });
    dir = mkdtempSync(join(tmpdir(), "vf-opencode-e2e-"));
    writeFileSync(
      join(dir, "tasks.jsonl"),
      JSON.stringify({
        prompt: "Write acp-ok to proof.txt, then tell me the answer.",
        answer: "42",
      }) +
        "\n",
    );
  });
  after(async () => {
    delete process.env[KEY_VAR];
    await fake?.close();
  });

  it("runs bash in the rollout's directory, records the calls and the tool call", async () => {
    const config = join(dir, "opencode.toml");
    writeFileSync(config, toml(fake, join(dir, "tasks.jsonl"), ""));
    const { episodes, lines } = await evalInProcess(["@", config]);
    const trace = at(at(episodes, 0).traces, 0);
    assert.deepEqual(trace.errors, [], JSON.stringify(trace.errors));
    const acp = trace.info.acp as AcpRecord;
    assert.equal(acp.agent.name, "OpenCode", JSON.stringify(acp.agent));
    assert.equal(acp.stop_reason, "end_turn");
    assert.equal(acp.text.trim(), "Done. The answer is 42.");
    const bash = acp.tool_calls.filter((c) => c.kind === "execute");
    assert.equal(bash.length, 1, JSON.stringify(acp.tool_calls));
    assert.equal(at(bash, 0).status, "completed");
    // the tool ran in the rollout's working directory: its output is that directory
    const workdir = trace.agent.runtime.id!;
    const toolTurn = fake.requests.find((r) =>
      r.body.messages.some((m: { role: string }) => m.role === "tool")
    );
    const tool = toolTurn?.body.messages.find((m: { role: string }) => m.role === "tool");
    assert.ok(String(tool?.content).includes(`${workdir}\nacp-ok`), JSON.stringify(tool));
    // the session title is recorded but marked: it is neither a turn nor the answer
    const titles = trace.calls.filter((c) => c.auxiliary === "session_title");
    assert.equal(titles.length, 1, JSON.stringify(trace.calls.map((c) => c.auxiliary)));
    const own = trace.calls.filter((c) => c.auxiliary === undefined && c.error === null);
    assert.deepEqual(own.map((c) => c.finish_reason), ["tool_calls", "stop"]);
    assert.equal(numTurns(trace), 2);
    assert.equal(lastReply(trace), "Done. The answer is 42.");
    assert.equal(trace.rewards.match?.score, 1, JSON.stringify(trace.rewards));
    for (const r of fake.requests) assert.equal(r.headers.authorization, `Bearer ${KEY}`);
    assert.ok(!at(lines, 0).includes(KEY), "the key never reaches the trace");
    if (realPythonUnavailable() === null) {
      const [answer] = runRealPython([{ kind: "episode", value: JSON.parse(at(lines, 0)) }]);
      assert.ok(answer?.ok, answer?.error);
    }
  });
  it("hands OpenCode the skills, the disabled tools and the system prompt", async () => {
    const skill = join(dir, "skills", "proof-writer");
    mkdirSync(skill, { recursive: true });
    writeFileSync(
      join(skill, "SKILL.md"),
      "---\nname: proof-writer\ndescription: Writes proof files for the acp test.\n---\n" +
        "Write the proof.\n",
    );
    writeFileSync(
      join(dir, "sys.jsonl"),
      JSON.stringify({ prompt: "Go.", answer: "42", system_prompt: "Be terse, acp-system." }) +
        "\n",
    );
    const config = join(dir, "opencode-keys.toml");
    writeFileSync(
      config,
      toml(
        fake,
        join(dir, "sys.jsonl"),
        `disabled_tools = ["write", "edit"]\nskills = [${JSON.stringify(skill)}]`,
      ),
    );
    const before = fake.requests.length;
    const { episodes } = await evalInProcess(["@", config]);
    const trace = at(at(episodes, 0).traces, 0);
    assert.deepEqual(trace.errors, [], JSON.stringify(trace.errors));
    const first = fake.requests.slice(before).find((r) => toolNames(r.body).length > 0)!.body;
    const tools = toolNames(first);
    assert.ok(tools.includes("bash") && tools.includes("skill"), JSON.stringify(tools));
    assert.ok(!tools.includes("write") && !tools.includes("edit"), JSON.stringify(tools));
    const request = JSON.stringify(first);
    assert.ok(request.includes("Writes proof files for the acp test."), "the skill is offered");
    assert.ok(request.includes("Be terse, acp-system."), "the system prompt is appended");
  });
});
