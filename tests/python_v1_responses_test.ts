/**
 * Runs whose program speaks the OpenAI Responses API write traces Python verifiers v1
 * loads (upstream a60a606): against the oracle, and against a strict loopback Responses
 * provider with reasoning, function calls, an answer cut at its token cap and a failed
 * stream — each checked as every chat run is (tests/_python_v1_exchange.ts).
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { evalInProcess } from "./_eval.ts";
import { assertExchangeable } from "./_python_v1_exchange.ts";
import { at } from "./_assert.ts";
import {
  type FakeResponses,
  type FakeResponsesReply,
  startFakeResponses,
} from "./fakes/responses_server.ts";

const OPENAI =
  pathToFileURL(join(import.meta.dirname!, "..", "node_modules", "openai", "index.mjs")).href;
const KEY = "sk-responses-contract";

/** A program: a JSON call with a bash tool, a function call answered, then two streamed calls. */
const PROGRAM = `import OpenAI from ${JSON.stringify(OPENAI)};
const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
const model = process.env.OPENAI_MODEL;
const tools = [{ type: "function", name: "bash", description: "Runs a command",
  parameters: { type: "object", properties: { command: { type: "string" } } }, strict: false }];
const input = [{ role: "user", content: process.env.VF_PROMPT }];
const first = await client.responses.create({ model, instructions: "Be brief.", input, tools });
input.push(...first.output);
for (const item of first.output) {
  if (item.type === "function_call") input.push({ type: "function_call_output", call_id: item.call_id, output: "ok" });
}
for (let turn = 0; turn < 2; turn++) {
  const stream = await client.responses.create({ model, instructions: "Be brief.", input, tools, stream: true });
  let final = null;
  for await (const event of stream) {
    if (event.type === "response.completed" || event.type === "response.incomplete") final = event.response;
  }
  if (final === null) process.exit(0); // the provider failed the stream: the trace says so
  input.push(...final.output, { role: "user", content: "go on" });
}
`;

describe("Responses runs that Python v1 loads", () => {
  let fake: FakeResponses;
  let dir: string;
  let agent: string;
  let script: (i: number) => FakeResponsesReply = () => "unscripted";
  before(async () => {
    process.env.VF_RESPONSES_CONTRACT_KEY = KEY;
    fake = await startFakeResponses({ apiKey: KEY, script: (_b, i) => script(i) });
    dir = mkdtempSync(join(tmpdir(), "vf-responses-contract-"));
    agent = join(dir, "agent.mjs");
    writeFileSync(agent, PROGRAM);
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const harness = () => [
    "--env.agent.harness.id",
    "command",
    "--env.agent.harness.command",
    JSON.stringify(["node", agent]),
  ];
  const provider = () => [
    "--client.base-url",
    fake.url,
    "--client.api-key-var",
    "VF_RESPONSES_CONTRACT_KEY",
  ];

  it("the oracle answering a Responses program: every line loads in Python", async () => {
    const out = await evalInProcess(["addition", "-n", "2", "-m", "oracle", ...harness()]);
    for (const episode of out.episodes) {
      const t = at(episode.traces, 0);
      assert.deepEqual(t.errors, []);
      assert.equal(t.calls.length, 3);
      assert.ok(t.calls.every((c) => c.endpoint === "/responses" && c.finish_reason === "stop"));
    }
    assertExchangeable(out);
  });

  it("reasoning, a function call and an answer cut at its cap: finish reasons as Python's", async () => {
    const base = fake.requests.length;
    script = (i) =>
      [
        {
          reasoning: "Add them.",
          calls: [{ name: "bash", arguments: { command: "expr 1 + 1" } }],
          usage: { input: 50, cached: 20, output: 10, reasoning: 6 },
        },
        { text: "The sum is", incomplete: true },
        "The sum is 2.",
      ][i - base] ?? "unscripted";
    const out = await evalInProcess([
      "addition",
      "-n",
      "1",
      "-m",
      "m",
      ...provider(),
      ...harness(),
    ]);
    const t = at(at(out.episodes, 0).traces, 0);
    assert.deepEqual(t.errors, []);
    assert.deepEqual(t.calls.map((c) => c.finish_reason), ["tool_calls", "length", "stop"]);
    assert.deepEqual(at(t.calls, 0).usage, {
      prompt_tokens: 30,
      completion_tokens: 10,
      cached_input_tokens: 20,
      reasoning_tokens: 6,
      cost: null,
    });
    const sampled = t.nodes.filter((n) => n.sampled).map((n) => n.message);
    assert.equal((at(sampled, 0) as { reasoning_content?: string }).reasoning_content, "Add them.");
    assertExchangeable(out);
  });

  it("a stream the provider fails: the call carries Python's Error and the line loads", async () => {
    const base = fake.requests.length;
    script = (i) =>
      [
        "Thinking.",
        { failed: { code: "server_error", message: "The model failed to respond." } },
      ][i - base] ?? "unscripted";
    const out = await evalInProcess([
      "addition",
      "-n",
      "1",
      "-m",
      "m",
      ...provider(),
      ...harness(),
    ]);
    const episode = at(out.episodes, 0);
    const t = at(episode.traces, 0);
    assert.equal(episode.ok, false);
    const failed = at(t.calls, 1);
    assert.equal(failed.error?.type, "ProviderError");
    assert.match(failed.error?.message ?? "", /failed: server_error: The model failed to respond/);
    assertExchangeable(out);
  });
});
