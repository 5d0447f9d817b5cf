/**
 * The official `openai` client as the program, speaking the Responses API through the
 * `command` harness to a live interception server, against a strict loopback Responses
 * provider: `responses.create`, `responses.stream`, `create({stream: true})`, a function
 * call round trip, and the SDK's own retries — of a dropped connection (answered from the
 * record, not sampled again), of a provider's 5xx and of a provider's dropped connection
 * (sent again: nothing was sampled). Every call lands in the trace, and Python v1 reads
 * every line of it (tests/_eval.ts).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { evalInProcess } from "./_eval.ts";
import { at } from "./_assert.ts";
import {
  type FakeResponses,
  type FakeResponsesReply,
  startFakeResponses,
} from "./fakes/responses_server.ts";

const OPENAI =
  pathToFileURL(join(import.meta.dirname!, "..", "node_modules", "openai", "index.mjs")).href;
const KEY = "sk-responses-sdk-secret";

/** The program: each step's answer feeds the next, as an agent's loop does. */
const program = (results: string) =>
  `import OpenAI from ${JSON.stringify(OPENAI)};
import { writeFileSync } from "node:fs";
let dropped = false;
const retries = [];
const client = new OpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
  maxRetries: 2,
  // the first answer of a request marked x-drop-once is read, then lost on the way
  fetch: async (url, init) => {
    retries.push(new Headers(init.headers).get("x-stainless-retry-count"));
    const res = await fetch(url, init);
    if (!dropped && new Headers(init.headers).get("x-drop-once") === "1") {
      dropped = true;
      await res.text();
      throw new TypeError("fetch failed: connection reset");
    }
    return res;
  },
});
const model = process.env.OPENAI_MODEL;
const tools = [{ type: "function", name: "bash", description: "Runs a command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  strict: false }];
const out = {};
const input = [];
const r1 = await client.responses.create({ model, instructions: "Answer briefly.",
  input: process.env.VF_PROMPT, temperature: 1.7 });
out.r1 = r1.output_text;
input.push({ role: "user", content: process.env.VF_PROMPT }, ...r1.output,
  { role: "user", content: "list the files" });
const r2 = await client.responses.create({ model, instructions: "Answer briefly.", input, tools });
const call = r2.output.find((i) => i.type === "function_call");
out.r2 = { name: call.name, arguments: JSON.parse(call.arguments) };
input.push(...r2.output, { type: "function_call_output", call_id: call.call_id, output: "a.txt\\n" });
const stream = client.responses.stream({ model, instructions: "Answer briefly.", input, tools });
let completed;
for await (const event of stream) if (event.type === "response.completed") completed = event.response;
out.r3 = (await stream.finalResponse()).output_text;
input.push(...completed.output, { role: "user", content: "again" });
const events = await client.responses.create({ model, instructions: "Answer briefly.", input, tools, stream: true });
const types = [];
let text = "";
for await (const event of events) {
  types.push(event.type);
  if (event.type === "response.output_text.delta") text += event.delta;
  if (event.type === "response.completed") completed = event.response;
}
out.r4 = { text, first: types[0], last: types.at(-1), usage: completed.usage };
input.push(...completed.output);
const ask = async (content, options) => {
  input.push({ role: "user", content });
  const r = await client.responses.create({ model, instructions: "Answer briefly.", input, tools }, options);
  input.push(...r.output);
  return r.output_text;
};
out.replayed = await ask("once more", { headers: { "x-drop-once": "1" } });
out.after500 = await ask("and now");
out.afterDrop = await ask("finally");
out.retries = retries;
writeFileSync(${JSON.stringify(results)}, JSON.stringify(out));
`;

/** The provider's answers, by request index. */
const SCRIPT: FakeResponsesReply[] = [
  "first answer",
  { reasoning: "The files are needed.", calls: [{ name: "bash", arguments: { command: "ls" } }] },
  "streamed: a.txt",
  { text: "events answer", usage: { input: 40, cached: 5, output: 9, reasoning: 3 } },
  "answered once",
  { status: 500, error: { message: "the upstream fell over" } },
  "after the 5xx",
  // dropped twice: the provider client tries a reused connection's failure once more on a
  // fresh one, which drops too, so the program's SDK sees a 502 and retries
  { drop: true },
  { drop: true },
  "after the drop",
];

describe("the openai SDK's Responses API through the command harness", () => {
  let fake: FakeResponses;
  let dir: string;
  before(async () => {
    process.env.VF_RESPONSES_KEY = KEY;
    fake = await startFakeResponses({ apiKey: KEY, script: (_b, i) => SCRIPT[i] ?? "unscripted" });
    dir = mkdtempSync(join(tmpdir(), "vf-responses-sdk-"));
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("records every call; replays a retried answer, sends a failed one again", async () => {
    const agent = join(dir, "agent.mjs");
    const results = join(dir, "results.json");
    writeFileSync(agent, program(results));
    const out = await evalInProcess([
      "addition",
      "-n",
      "1",
      "-m",
      "m-resp",
      "--sampling.temperature",
      "0.3",
      "--sampling.max_tokens",
      "64",
      "--client.base-url",
      fake.url,
      "--client.api-key-var",
      "VF_RESPONSES_KEY",
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(["node", agent]),
    ]);
    const t = at(at(out.episodes, 0).traces, 0);
    assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
    assert.equal(t.stop_condition, "agent_completed");

    const got = JSON.parse(readFileSync(results, "utf8"));
    assert.equal(got.r1, "first answer");
    assert.deepEqual(got.r2, { name: "bash", arguments: { command: "ls" } });
    assert.equal(got.r3, "streamed: a.txt");
    assert.deepEqual(
      { text: got.r4.text, first: got.r4.first, last: got.r4.last },
      { text: "events answer", first: "response.created", last: "response.completed" },
    );
    assert.equal(got.r4.usage.input_tokens_details.cached_tokens, 5);
    assert.equal(got.replayed, "answered once");
    assert.equal(got.after500, "after the 5xx");
    assert.equal(got.afterDrop, "after the drop");

    // the provider: one request per attempt, the retry of a lost answer never reached it
    assert.equal(fake.requests.length, 10);
    for (const { headers, body } of fake.requests) {
      assert.equal(headers.authorization, `Bearer ${KEY}`);
      assert.equal(body.model, "m-resp");
      assert.equal(body.temperature, 0.3, "the run's temperature, not the program's");
      assert.equal(body.max_output_tokens, 64);
      assert.equal("max_tokens" in body, false);
    }
    // the program's attempts: each of the three faults made the SDK try once more
    assert.deepEqual(got.retries, ["0", "0", "0", "0", "0", "1", "0", "1", "0", "1"]);

    // the trace: every exchange one call, the failed attempts with their errors
    assert.equal(t.calls.length, 9);
    assert.ok(t.calls.every((c) => c.endpoint === "/responses" && c.model === "m-resp"));
    assert.deepEqual(t.calls.map((c) => c.finish_reason), [
      "stop",
      "tool_calls",
      "stop",
      "stop",
      "stop",
      null,
      "stop",
      null,
      "stop",
    ]);
    assert.deepEqual(t.calls.map((c) => c.error?.status_code ?? null), [
      null,
      null,
      null,
      null,
      null,
      500,
      null,
      503,
      null,
    ]);
    assert.deepEqual(at(t.calls, 0).sampling, { temperature: 0.3, max_tokens: 64 });
    assert.deepEqual(at(t.calls, 3).usage, {
      prompt_tokens: 35,
      completion_tokens: 9,
      cached_input_tokens: 5,
      reasoning_tokens: 3,
      cost: null,
    });
    assert.deepEqual(t.tools.map((tool) => tool.name), ["bash"]);

    // the graph: one branch, the conversation the program held
    const sampled = t.nodes.filter((n) => n.sampled).map((n) => n.message);
    assert.equal(sampled.length, 7);
    assert.deepEqual(at(sampled, 1), {
      role: "assistant",
      content: null,
      reasoning_content: "The files are needed.",
      tool_calls: [{ id: "call_resp_fake_2_0", name: "bash", arguments: '{"command":"ls"}' }],
      provider_state: (at(sampled, 1) as { provider_state: unknown }).provider_state,
    });
    const tool = t.nodes.find((n) => n.message.role === "tool");
    assert.deepEqual(tool?.message, {
      role: "tool",
      tool_call_id: "call_resp_fake_2_0",
      content: "a.txt\n",
    });
    const roots = t.nodes.filter((n) => n.parent === null);
    assert.equal(roots.length, 1, "one conversation, never forked");
    const last = t.nodes.at(-1)!;
    assert.deepEqual(
      [last.sampled, (last.message as { content: string }).content],
      [true, "after the drop"],
    );
  });
});
