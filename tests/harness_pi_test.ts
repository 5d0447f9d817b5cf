/**
 * The `pi` harness end to end with the real packages (pi 0.84.1 and pi-acp 0.0.34 under
 * the Bun installed with them) against a strict scripted chat completions model: one
 * shell tool call, then an answer. Skipped, with one line, when the agent install is not
 * in the host cache (`scripts/ci_agents.sh` puts it there).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import pi from "../plugins/harnesses/pi/mod.ts";
import { isInstalled } from "../kit/harness/acp/install.ts";
import type { AcpRecord } from "../kit/harness/acp/record.ts";
import { evalInProcess } from "./_eval.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { realPythonUnavailable, runRealPython } from "./_python_v1.ts";
import { at } from "./_assert.ts";

const KEY_VAR = "VF_PI_TEST_KEY";
const KEY = "sk-pi-e2e-secret-0123456789";
const missing = isInstalled(pi.agentBundle!) ? null : "pi is not in the agent cache " +
  "(run scripts/ci_agents.sh)";
if (missing) console.log(`harness_pi_test: skipped: ${missing}`);

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

/** The model: the shell tool first, then (after its result) the answer. */
// deno-lint-ignore no-explicit-any
function script(body: Record<string, any>) {
  if ((body.messages as { role: string }[]).some((m) => m.role === "tool")) {
    return "Done. The answer is 42.";
  }
  return {
    tool_calls: [{
      name: "bash",
      arguments: { command: "echo acp-ok > proof.txt && pwd && cat proof.txt" },
    }],
  };
}

describe("pi harness (real agent over ACP)", { skip: missing ?? false }, () => {
  let fake: Fake;
  let dir: string;
  before(async () => {
    process.env[KEY_VAR] = KEY;
    fake = await startFakeOpenAI({ apiKey: KEY, script });
    dir = mkdtempSync(join(tmpdir(), "vf-pi-e2e-"));
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

  it("runs the tool in the rollout's directory, records both calls and the tool call", async () => {
    const config = join(dir, "pi.toml");
    writeFileSync(
      config,
      `model = "test-model"
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
id = "pi"
[env.agent.runtime]
type = "subprocess"
[env.agent.timeout]
rollout = 120
`,
    );
    const { episodes, lines } = await evalInProcess(["@", config]);
    const trace = at(at(episodes, 0).traces, 0);
    assert.deepEqual(trace.errors, [], JSON.stringify(trace.errors));
    assert.equal(trace.calls.length, 2, "the tool-call turn and the answer turn");
    assert.equal(trace.rewards.match?.score, 1, JSON.stringify(trace.rewards));

    const acp = trace.info.acp as AcpRecord;
    assert.equal(acp.agent.name, "pi-acp");
    assert.equal(acp.stop_reason, "end_turn");
    assert.equal(acp.text.trim(), "Done. The answer is 42.");
    assert.equal(acp.tool_calls.length, 1, JSON.stringify(acp.tool_calls));
    const call = at(acp.tool_calls, 0);
    assert.equal(call.status, "completed");
    assert.equal(call.kind, "execute");
    // the tool ran in the rollout's working directory: its output is that directory
    const workdir = trace.agent.runtime.id!;
    assert.ok(call.text.includes(`${workdir}\nacp-ok`), JSON.stringify(call.text));

    // the model saw the tool's output, under the run's key, through the interception
    const second = at(fake.requests, fake.requests.length - 1);
    const tool = second.body.messages.find((m: { role: string }) => m.role === "tool");
    assert.ok(String(tool?.content).includes("acp-ok"), JSON.stringify(tool));
    assert.ok(!at(lines, 0).includes(KEY), "the key never reaches the trace");

    const first = at(fake.requests, 0).body;
    assert.ok(first.tools.some((t: { function: { name: string } }) => t.function.name === "write"));

    const why = realPythonUnavailable();
    if (why === null) {
      const [answer] = runRealPython([{ kind: "episode", value: JSON.parse(at(lines, 0)) }]);
      assert.ok(answer?.ok, answer?.error);
    }
  });

  it("hands pi the skills, the disabled tools and the system prompt", async () => {
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
    const config = join(dir, "pi-keys.toml");
    writeFileSync(
      config,
      `model = "test-model"
[client]
base_url = ${JSON.stringify(fake.url)}
api_key_var = "${KEY_VAR}"
[env.taskset]
id = "jsonl"
path = ${JSON.stringify(join(dir, "sys.jsonl"))}
[env.agent.harness]
id = "pi"
disabled_tools = ["write", "edit"]
skills = [${JSON.stringify(skill)}]
`,
    );
    const before = fake.requests.length;
    const { episodes } = await evalInProcess(["@", config]);
    const trace = at(at(episodes, 0).traces, 0);
    assert.deepEqual(trace.errors, [], JSON.stringify(trace.errors));
    const first = at(fake.requests, before).body;
    const tools = first.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(tools.includes("bash"), JSON.stringify(tools));
    assert.ok(!tools.includes("write") && !tools.includes("edit"), JSON.stringify(tools));
    const system = String(first.messages[0].content);
    assert.ok(system.includes("Writes proof files for the acp test."), "the skill is offered");
    assert.ok(system.includes("Be terse, acp-system."), "the system prompt is appended");
  });
});
