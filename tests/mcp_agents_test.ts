/**
 * A rollout's toolsets reach agent programs through the toolset gateway: a `command`
 * program finds the endpoints in `$VF_MCP_CONFIG`, and Claude Code (the real agent over
 * ACP, skipped when its install is not in the host cache) gets them in `session/new`'s
 * `mcpServers`. The calls land in the trace as the bash harness records them, and the
 * reward reads the toolset's state.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import process from "node:process";
import claude from "../plugins/harnesses/claude-code/mod.ts";
import { isInstalled } from "../kit/harness/acp/install.ts";
import { execPath } from "../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import type { ToolCallRecord } from "../kit/harness/tools.ts";
import type { AcpRecord } from "../kit/harness/acp/record.ts";
import { evalInProcess } from "./_eval.ts";
import { startFakeAnthropic } from "./fakes/anthropic_server.ts";
import { at } from "./_assert.ts";

const TASKSET = join(import.meta.dirname!, "fixtures", "mcp", "notes_taskset.ts");
const PROGRAM = join(import.meta.dirname!, "fixtures", "mcp", "mcp_program.ts");
const ROOT = join(import.meta.dirname!, "..");
const KEY_VAR = "VF_MCP_AGENTS_KEY";
const KEY = "sk-ant-mcp-agents-0123456789";

const claudeMissing = isInstalled(claude.agentBundle!)
  ? null
  : "Claude Code is not in the agent cache (run scripts/ci_agents.sh claude-code)";
if (claudeMissing) console.log(`mcp_agents_test: claude-code skipped: ${claudeMissing}`);

type Json = Record<string, unknown>;

function checkCalls(calls: ToolCallRecord[], names: string[]): void {
  assert.deepEqual(calls.map((c) => c.name), names);
  for (const c of calls) {
    assert.equal(c.error, null, c.result);
    assert.ok(c.duration >= 0 && c.duration < 30);
  }
}

describe("MCP toolsets for agent programs", () => {
  before(() => {
    process.env[KEY_VAR] = KEY;
  });
  after(() => {
    delete process.env[KEY_VAR];
  });

  it("a command program gets the endpoints in $VF_MCP_CONFIG", async () => {
    const argv = runtimeName() === "deno"
      ? [execPath(), "run", "-A", "--no-check", `--config=${join(ROOT, "deno.json")}`, PROGRAM]
      : [execPath(), PROGRAM];
    const { episodes } = await evalInProcess([
      TASKSET,
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(argv),
      "--env.agent.harness.disabled-tools",
      '["notes_fail"]',
      "-m",
      "m",
      "--client.base-url",
      "http://127.0.0.1:9/v1",
      "--client.api-key-var",
      KEY_VAR,
    ], { cwd: ROOT });
    const trace = at(at(episodes, 0).traces, 0);
    assert.equal(trace.ok, true, JSON.stringify([trace.errors, trace.info.agent_output]));
    const out = trace.info.agent_output as { stdout: string };
    assert.equal(out.stdout, "tools: add,list\nalpha\nbeta\n");
    checkCalls(trace.info.tool_calls as ToolCallRecord[], ["notes_add", "notes_add", "notes_list"]);
    assert.deepEqual(trace.rewards.stored, { score: 1, weight: 1 });
  });

  it(
    "Claude Code gets them in session/new's mcpServers",
    { skip: claudeMissing ?? false },
    async () => {
      const hasResult = (body: Json) =>
        JSON.stringify(body.messages).includes('"type":"tool_result"');
      const fake = await startFakeAnthropic({
        apiKey: KEY,
        script(body: Json) {
          const tools = ((body.tools as { name: string }[] | undefined) ?? []).map((t) => t.name);
          if (!tools.includes("mcp__notes__add")) {
            return tools.length
              ? { text: `no notes tools: ${tools.join(",")}` }
              : { text: '{"title": "Notes"}' };
          }
          if (hasResult(body)) return { text: "Stored both." };
          return {
            tool_use: [
              { id: "toolu_a", name: "mcp__notes__add", input: { text: "alpha" } },
              { id: "toolu_b", name: "mcp__notes__add", input: { text: "beta" } },
            ],
          };
        },
      });
      try {
        const { episodes } = await evalInProcess([
          TASKSET,
          "--env.agent.harness.id",
          "claude-code",
          // the MCP tools in the request itself, not behind Claude Code's tool search
          "--env.agent.harness.env",
          '{"ENABLE_TOOL_SEARCH": "false"}',
          "--env.agent.timeout.rollout",
          "180",
          "-m",
          "claude-test",
          "--client.base-url",
          fake.url,
          "--client.api-key-var",
          KEY_VAR,
        ]);
        const trace = at(at(episodes, 0).traces, 0);
        assert.deepEqual(trace.errors, [], JSON.stringify(trace.errors));
        const acp = trace.info.acp as AcpRecord;
        assert.equal(acp.text.trim(), "Stored both.", JSON.stringify(acp));
        const results = fake.requests.filter((r) => hasResult(r.body)).map((r) =>
          JSON.stringify(r.body.messages).slice(-600)
        );
        assert.ok(trace.info.tool_calls, JSON.stringify({ results, calls: acp.tool_calls }));
        checkCalls(trace.info.tool_calls as ToolCallRecord[], ["notes_add", "notes_add"]);
        assert.deepEqual(trace.rewards.stored, { score: 1, weight: 1 });
      } finally {
        await fake.close();
      }
    },
  );
});
