/**
 * The official `@anthropic-ai/sdk` as the program of a `vf` run: the `command` harness hands
 * it ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY, it calls the live interception server
 * (`messages.create`, a tool-use round trip, `messages.stream`, `countTokens`), and the
 * calls go to a strict loopback Anthropic provider (tests/fakes/anthropic_server.ts). Every
 * model call lands in the trace, `count_tokens` in none; the SDK's retries after a 529 and
 * after a dropped connection are sent again when nothing was sampled and replayed when it
 * was; Python v1's models load every trace line. With `-m oracle` the same program gets
 * the task's answer in Anthropic's dialect, JSON and streamed, with no provider at all.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { Episode, Trace } from "../kit/trace/types.ts";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic_server.ts";
import { run, traceLines } from "./_run.ts";
import { assertRealPythonLoadsEpisodes } from "./_python_v1.ts";
import { filesUnder } from "./_source_tree.ts";
import { at } from "./_assert.ts";

const SDK_URL = new URL("../node_modules/@anthropic-ai/sdk/index.mjs", import.meta.url).href;
const KEY = "sk-ant-provider-KEY-5d2e8c1b";
const WEATHER = {
  name: "get_weather",
  description: "The weather of a city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

/**
 * The program: what it does is its prompt. `full` makes a tool-use round trip with
 * `messages.create`, streams a third turn with `messages.stream` and counts tokens; the
 * others make one `messages.create` (`program-drop` drops the connection after its first
 * answer arrived, as a network would, so the SDK retries).
 */
const AGENT = `
import Anthropic from ${JSON.stringify(SDK_URL)};
const env = process.env;
const mode = env.VF_PROMPT;
let dropped = false;
let fetches = 0;
const client = new Anthropic({
  baseURL: env.ANTHROPIC_BASE_URL,
  apiKey: env.ANTHROPIC_API_KEY,
  maxRetries: 3,
  fetch: async (url, init) => {
    fetches++;
    const res = await fetch(url, init);
    if (mode === "program-drop" && !dropped) {
      dropped = true;
      await res.arrayBuffer();
      throw new TypeError("fetch failed: the connection dropped");
    }
    return res;
  },
});
const model = "claude-program";
const tools = [${JSON.stringify(WEATHER)}];
const out = { mode };
const user = { role: "user", content: mode === "full" ? "Weather in Paris?" : "ping " + mode };
if (mode === "full") {
  const first = await client.messages.create({ model, max_tokens: 512, system: "Be brief.", messages: [user], tools });
  const use = first.content.find((b) => b.type === "tool_use");
  const turn2 = [user, { role: "assistant", content: first.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] }];
  const second = await client.messages.create({ model, max_tokens: 512, system: "Be brief.", messages: turn2, tools });
  const turn3 = [...turn2, { role: "assistant", content: second.content }, { role: "user", content: "Sum up." }];
  const stream = client.messages.stream({ model, max_tokens: 512, system: "Be brief.", messages: turn3, tools });
  const events = [];
  stream.on("streamEvent", (e) => events.push(e.type));
  const final = await stream.finalMessage();
  const counted = await client.messages.countTokens({ model, messages: [user] });
  Object.assign(out, { first, second, final, events, counted });
} else if (mode === "oracle") {
  const json = await client.messages.create({ model, max_tokens: 64, messages: [user] });
  const turn2 = [user, { role: "assistant", content: json.content }, { role: "user", content: "Again." }];
  const streamed = await client.messages.stream({ model, max_tokens: 64, messages: turn2 }).finalMessage();
  Object.assign(out, { json, streamed });
} else {
  out.message = await client.messages.create({ model, max_tokens: 64, messages: [user] });
  out.fetches = fetches;
}
console.log(JSON.stringify(out));
`;

/** One task per program mode. */
const TASKS = ["full", "flaky-529", "flaky-drop", "program-drop"];

describe("the Anthropic SDK as the program, through the command harness", () => {
  const root = mkdtempSync(join(tmpdir(), "vf-anthropic-sdk-"));
  const seen = new Map<string, number>();
  let fake: FakeAnthropic;
  let episodes: Map<string, Episode>;
  let runDir: string;

  before(async () => {
    fake = await startFakeAnthropic({
      apiKey: KEY,
      script(body) {
        const messages = body.messages as { role: string; content: unknown }[];
        const first = String(messages[0]?.content);
        const turns = messages.filter((m) => m.role === "assistant").length;
        const n = seen.get(first) ?? 0;
        seen.set(first, n + 1);
        if (first === "ping flaky-529" && n === 0) {
          return { error: { status: 529, type: "overloaded_error", message: "Overloaded" } };
        }
        if (first === "ping flaky-drop" && n < 2) return { drop: true };
        if (first.startsWith("ping ")) return { text: `answer to ${first}` };
        if (turns === 0) {
          return {
            tool_use: [{ id: "toolu_paris", name: "get_weather", input: { city: "Paris" } }],
            usage: {
              input_tokens: 30,
              cache_creation_input_tokens: 4,
              cache_read_input_tokens: 12,
              output_tokens: 9,
            },
          };
        }
        if (turns === 1) return { text: "It is sunny in Paris." };
        return { thinking: { thinking: "Short answer.", signature: "sig-z" }, text: "Sunny." };
      },
    });
    writeFileSync(join(root, "agent.mjs"), AGENT);
    writeFileSync(
      join(root, "tasks.jsonl"),
      TASKS.map((p) => JSON.stringify({ prompt: p })).join("\n") + "\n",
    );
    process.env.VF_ANTHROPIC_TEST_KEY = KEY;
    const out = await run([
      "jsonl",
      "--env.taskset.path",
      join(root, "tasks.jsonl"),
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(["node", join(root, "agent.mjs")]),
      "-m",
      "claude-run",
      "--client.base-url",
      fake.url,
      "--client.api-key-var",
      "VF_ANTHROPIC_TEST_KEY",
      "-o",
      root,
    ], root);
    runDir = out.runDir;
    episodes = new Map(
      traceLines(runDir).map((l) => JSON.parse(l) as Episode).map((e) => [
        String(e.task.data.prompt),
        e,
      ]),
    );
  });
  after(async () => {
    delete process.env.VF_ANTHROPIC_TEST_KEY;
    await fake.close();
    rmSync(root, { recursive: true, force: true });
  });

  const traceOf = (prompt: string): Trace => {
    const episode = episodes.get(prompt);
    assert.ok(episode, `no episode for ${prompt}`);
    return at(episode.traces, 0);
  };
  // deno-lint-ignore no-explicit-any
  const outputOf = (trace: Trace): any => {
    const output = trace.info.agent_output as { stdout: string; stderr: string; exit_code: number };
    assert.equal(output.exit_code, 0, output.stderr);
    return JSON.parse(output.stdout);
  };

  it("records create, the tool round trip and the stream; count_tokens goes unrecorded", () => {
    const trace = traceOf("full");
    assert.equal(trace.ok, true, JSON.stringify(trace.errors));
    assert.deepEqual(trace.calls.map((c) => [c.endpoint, c.model, c.finish_reason, c.error]), [
      ["/v1/messages", "claude-run", "tool_calls", null],
      ["/v1/messages", "claude-run", "stop", null],
      ["/v1/messages", "claude-run", "stop", null],
    ]);
    assert.deepEqual(at(trace.calls, 0).usage, {
      prompt_tokens: 34,
      completion_tokens: 9,
      cached_input_tokens: 12,
      reasoning_tokens: null,
      cost: null,
    });
    assert.equal(at(trace.calls, 0).sampling.max_tokens, 512);
    assert.deepEqual(trace.tools, [{
      name: WEATHER.name,
      description: WEATHER.description,
      parameters: WEATHER.input_schema,
      strict: null,
    }]);
    const nodes = trace.nodes.map((n) => [n.message.role, n.sampled]);
    assert.deepEqual(nodes, [
      ["system", false],
      ["user", false],
      ["assistant", true],
      ["tool", false],
      ["assistant", true],
      ["user", false],
      ["assistant", true],
    ]);
    const last = at(trace.nodes, 6).message;
    assert.deepEqual(last, {
      role: "assistant",
      content: "Sunny.",
      reasoning_content: "Short answer.",
      provider_state: [{ type: "thinking", thinking: "Short answer.", signature: "sig-z" }],
    });
    const call = at(trace.nodes, 2).message;
    assert.equal(call.role, "assistant");
    assert.deepEqual(call.role === "assistant" ? call.tool_calls : null, [
      { id: "toolu_paris", name: "get_weather", arguments: '{"city":"Paris"}' },
    ]);
  });

  it("the program got the provider's answers, the stream's events in order", () => {
    const out = outputOf(traceOf("full"));
    assert.equal(out.first.content[0].type, "tool_use");
    assert.equal(out.second.content[0].text, "It is sunny in Paris.");
    assert.equal(out.final.content.at(-1).text, "Sunny.");
    assert.equal(out.final.stop_reason, "end_turn");
    assert.equal(out.events[0], "message_start");
    assert.equal(out.events.at(-1), "message_stop");
    assert.ok(out.events.includes("content_block_delta"));
    assert.equal(typeof out.counted.input_tokens, "number");
    assert.ok(out.counted.input_tokens > 0);
  });

  it("a 529 the SDK retried is sent again (nothing was sampled): one failed call, one answer", () => {
    const trace = traceOf("flaky-529");
    assert.equal(trace.ok, true, JSON.stringify(trace.errors));
    assert.equal(seen.get("ping flaky-529"), 2);
    assert.deepEqual(trace.calls.map((c) => c.error === null), [false, true]);
    assert.match(at(trace.calls, 0).error!.message, /529.*Overloaded/);
    assert.equal(at(trace.calls, 0).node, null);
    assert.equal(outputOf(trace).message.content[0].text, "answer to ping flaky-529");
  });

  it("a provider that dropped the connection: the retry is answered once, sampled once", () => {
    const trace = traceOf("flaky-drop");
    assert.equal(trace.ok, true, JSON.stringify(trace.errors));
    assert.equal(seen.get("ping flaky-drop"), 3);
    assert.equal(trace.calls.filter((c) => c.node !== null).length, 1);
    assert.equal(trace.calls.at(-1)!.error, null);
    assert.equal(trace.nodes.filter((n) => n.sampled).length, 1);
    assert.equal(outputOf(trace).message.content[0].text, "answer to ping flaky-drop");
  });

  it("the program's connection dropped after the answer: the SDK's retry is replayed", () => {
    const trace = traceOf("program-drop");
    assert.equal(trace.ok, true, JSON.stringify(trace.errors));
    const out = outputOf(trace);
    assert.equal(out.fetches, 2, "the SDK retried");
    assert.equal(out.message.content[0].text, "answer to ping program-drop");
    assert.equal(seen.get("ping program-drop"), 1, "the retry was not sent upstream");
    assert.equal(trace.calls.length, 1);
    assert.equal(at(trace.calls, 0).error, null);
  });

  it("sent every call upstream in Anthropic's dialect with the provider's key and the run's model", () => {
    assert.equal(fake.requests.length, 3 + 2 + 3 + 1);
    assert.equal(fake.countRequests.length, 1);
    for (const req of [...fake.requests, ...fake.countRequests]) {
      assert.equal(req.headers["x-api-key"], KEY);
      assert.equal(req.headers.authorization, undefined);
      assert.match(req.headers["anthropic-version"] ?? "", /^\d{4}-\d{2}-\d{2}$/);
      assert.equal(req.body.model, "claude-run");
    }
    const full = fake.requests.filter((r) => Array.isArray(r.body.tools));
    assert.deepEqual(full.map((r) => r.body.stream === true), [false, false, true]);
    for (const file of [...filesUnder(runDir)]) {
      assert.ok(!readFileSync(file, "utf8").includes(KEY), `the provider key is in ${file}`);
    }
  });

  it("writes trace lines Python v1's models load", () => {
    assertRealPythonLoadsEpisodes(traceLines(runDir));
  });
});

describe("the Anthropic SDK as the program, answered by the oracle", () => {
  it("gets the task's answer as a Message and as a stream; both calls are in the trace", async () => {
    const root = mkdtempSync(join(tmpdir(), "vf-anthropic-oracle-"));
    try {
      writeFileSync(join(root, "agent.mjs"), AGENT);
      writeFileSync(join(root, "tasks.jsonl"), JSON.stringify({ prompt: "oracle", answer: "42" }));
      const out = await run([
        "jsonl",
        "--env.taskset.path",
        join(root, "tasks.jsonl"),
        "--env.agent.harness.id",
        "command",
        "--env.agent.harness.command",
        JSON.stringify(["node", join(root, "agent.mjs")]),
        "-m",
        "oracle",
        "-o",
        root,
      ], root);
      const lines = traceLines(out.runDir);
      assert.equal(lines.length, 1);
      const trace = at((JSON.parse(at(lines, 0)) as Episode).traces, 0);
      assert.equal(trace.ok, true, JSON.stringify(trace.errors));
      const output = trace.info.agent_output as { stdout: string; stderr: string };
      const answer = JSON.parse(output.stdout);
      assert.equal(answer.json.content[0].text, "42", output.stderr);
      assert.equal(answer.json.stop_reason, "end_turn");
      assert.equal(answer.streamed.content[0].text, "42");
      assert.deepEqual(trace.calls.map((c) => [c.endpoint, c.finish_reason, c.error]), [
        ["/v1/messages", "stop", null],
        ["/v1/messages", "stop", null],
      ]);
      assert.equal(trace.nodes.filter((n) => n.sampled).length, 2);
      assertRealPythonLoadsEpisodes(lines);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
