/**
 * Translation to a chat-only provider (`client.dialects = ["chat"]`): the official
 * `@anthropic-ai/sdk` (`messages.create`, `messages.stream`) and `openai` (`responses.create`,
 * `responses.stream`, `create({stream: true})`) are the program of a `vf` run through the
 * `command` harness, and every call goes to a strict loopback chat completions server
 * (tests/fakes/openai_server.ts: it answers only `/v1/chat/completions` and refuses any
 * parameter chat does not take). Each program makes a tool call round trip, as JSON and
 * streamed; the SDKs parse the answers in their own dialect; the provider sees chat
 * requests carrying the tool results; the trace records the program's calls; Python v1
 * loads every trace line. A request that cannot be translated (an Anthropic server tool,
 * an image in a tool result, a Responses built-in tool) gets its dialect's 400 error body
 * and fails the episode, with nothing sent upstream. With `-m oracle` the same programs are
 * answered through chat completions with no provider at all.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import type { Episode, Trace } from "../kit/trace/types.ts";
import { type FakeOpenAI, type FakeRequest, startFakeOpenAI } from "./fakes/openai_server.ts";
import { run, traceLines } from "./_run.ts";
import { assertRealPythonLoadsEpisodes } from "./_python_v1.ts";
import { filesUnder } from "./_source_tree.ts";
import { at } from "./_assert.ts";

const ANTHROPIC = new URL("../node_modules/@anthropic-ai/sdk/index.mjs", import.meta.url).href;
const OPENAI = new URL("../node_modules/openai/index.mjs", import.meta.url).href;
const KEY = "sk-chat-only-KEY-7f3a9e21";
const SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

/** The program: what it does is its prompt (`VF_PROMPT`); it prints what the SDK parsed. */
const AGENT = `
import Anthropic from ${JSON.stringify(ANTHROPIC)};
import OpenAI from ${JSON.stringify(OPENAI)};
const env = process.env;
const mode = env.VF_PROMPT;
const out = { mode };
const anthropic = new Anthropic({ maxRetries: 0 });
const openai = new OpenAI({ maxRetries: 0 });
const model = "program-model";
const tools = [{ name: "get_weather", description: "The weather of a city", input_schema: ${
  JSON.stringify(SCHEMA)
} }];
const user = { role: "user", content: mode };
const turn2 = (first) => {
  const use = first.content.find((b) => b.type === "tool_use");
  return [user, { role: "assistant", content: first.content },
    { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "sunny" }] }];
};
const fnTools = [{ type: "function", name: "get_weather", description: "The weather of a city",
  parameters: ${JSON.stringify(SCHEMA)}, strict: false }];
const input2 = (first) => {
  const call = first.output.find((i) => i.type === "function_call");
  return [{ role: "user", content: mode }, ...first.output,
    { type: "function_call_output", call_id: call.call_id, output: "sunny" }];
};
const refused = async (fn) => {
  try {
    await fn();
    return { status: 200 };
  } catch (err) {
    return { status: err.status, error: err.error };
  }
};
const body = { model, max_tokens: 512, system: "Be brief.", tools, stop_sequences: ["END"] };
if (mode === "anthropic-json") {
  const first = await anthropic.messages.create({ ...body, messages: [user] });
  const second = await anthropic.messages.create({ ...body, messages: turn2(first) });
  Object.assign(out, { first, second });
} else if (mode === "anthropic-stream") {
  const events = [];
  const s1 = anthropic.messages.stream({ ...body, messages: [user] });
  s1.on("streamEvent", (e) => events.push(e.type));
  const first = await s1.finalMessage();
  const s2 = anthropic.messages.stream({ ...body, messages: turn2(first) });
  const texts = [];
  s2.on("text", (t) => texts.push(t));
  const second = await s2.finalMessage();
  Object.assign(out, { first, second, events, texts });
} else if (mode === "anthropic-server-tool") {
  out.refused = await refused(() => anthropic.messages.create({ ...body, messages: [user],
    tools: [...tools, { type: "web_search_20250305", name: "web_search", max_uses: 2 }] }));
} else if (mode === "anthropic-tool-image") {
  const image = { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } };
  out.refused = await refused(() => anthropic.messages.create({ ...body, messages: [user,
    { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: [image] }] }] }));
} else if (mode === "responses-json") {
  const request = { model, instructions: "Be brief.", tools: fnTools, max_output_tokens: 256 };
  const first = await openai.responses.create({ ...request, input: mode });
  const second = await openai.responses.create({ ...request, input: input2(first) });
  Object.assign(out, { first, second, text: second.output_text });
} else if (mode === "responses-stream") {
  const request = { model, instructions: "Be brief.", tools: fnTools };
  const s1 = openai.responses.stream({ ...request, input: mode });
  const first = await s1.finalResponse();
  const types = [];
  let text = "";
  let completed;
  const s2 = await openai.responses.create({ ...request, input: input2(first), stream: true });
  for await (const e of s2) {
    types.push(e.type);
    if (e.type === "response.output_text.delta") text += e.delta;
    if (e.type === "response.completed") completed = e.response;
  }
  Object.assign(out, { first, types, text, completed });
} else if (mode === "oracle") {
  const json = await anthropic.messages.create({ model, max_tokens: 64, messages: [user] });
  const streamed = await anthropic.messages.stream({ model, max_tokens: 64,
    messages: [user, { role: "assistant", content: json.content }, { role: "user", content: "Again." }] }).finalMessage();
  const response = await openai.responses.create({ model, input: mode });
  Object.assign(out, { json, streamed, text: response.output_text });
} else if (mode === "responses-web-search") {
  out.refused = await refused(() => openai.responses.create({ model, input: mode,
    tools: [...fnTools, { type: "web_search" }] }));
}
console.log(JSON.stringify(out));
`;

const TASKS = [
  "anthropic-json",
  "anthropic-stream",
  "anthropic-server-tool",
  "anthropic-tool-image",
  "responses-json",
  "responses-stream",
  "responses-web-search",
];

/** The first user message's text of a chat request (the program's mode). */
function modeOf(body: FakeRequest["body"]): string {
  const first = (body.messages as { role: string; content: unknown }[]).find((m) =>
    m.role === "user"
  );
  return typeof first?.content === "string" ? first.content : JSON.stringify(first?.content);
}

describe("programs speaking Anthropic Messages and OpenAI Responses to a chat-only provider", () => {
  const root = mkdtempSync(join(tmpdir(), "vf-translate-"));
  let fake: FakeOpenAI;
  let episodes: Map<string, Episode>;
  let runDir: string;

  before(async () => {
    fake = await startFakeOpenAI({
      apiKey: KEY,
      knownParams: true,
      script(body) {
        const messages = body.messages as { role: string; content: unknown }[];
        if (messages.at(-1)?.role === "tool") {
          return {
            content: "It is sunny in Paris.",
            usage: { prompt_tokens: 50, completion_tokens: 7 },
          };
        }
        return {
          reasoning_content: "The weather tool knows.",
          tool_calls: [{ name: "get_weather", arguments: { city: "Paris" } }],
          usage: {
            prompt_tokens: 30,
            completion_tokens: 9,
            prompt_tokens_details: { cached_tokens: 12 },
            completion_tokens_details: { reasoning_tokens: 3 },
          },
        };
      },
    });
    writeFileSync(join(root, "agent.mjs"), AGENT);
    writeFileSync(
      join(root, "tasks.jsonl"),
      TASKS.map((p) => JSON.stringify({ prompt: p })).join("\n") + "\n",
    );
    process.env.VF_TRANSLATE_TEST_KEY = KEY;
    const out = await run([
      "jsonl",
      "--env.taskset.path",
      join(root, "tasks.jsonl"),
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(["node", join(root, "agent.mjs")]),
      "-m",
      "chat-run",
      "--client.base-url",
      fake.url,
      "--client.api-key-var",
      "VF_TRANSLATE_TEST_KEY",
      "--client.dialects",
      '["chat"]',
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
    delete process.env.VF_TRANSLATE_TEST_KEY;
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
  const requestsOf = (mode: string) => fake.requests.filter((r) => modeOf(r.body) === mode);

  it("the provider got chat completions requests, the tool results round-tripped", () => {
    for (const req of fake.requests) {
      assert.equal(req.path, "/v1/chat/completions");
      assert.equal(req.headers.authorization, `Bearer ${KEY}`);
      assert.equal(req.body.model, "chat-run");
    }
    for (
      const mode of ["anthropic-json", "anthropic-stream", "responses-json", "responses-stream"]
    ) {
      const [first, second, ...rest] = requestsOf(mode);
      assert.ok(first && second, `two requests for ${mode}`);
      assert.equal(rest.length, 0, mode);
      assert.deepEqual(first.body.messages, [
        { role: "system", content: "Be brief." },
        { role: "user", content: mode },
      ]);
      // the Responses tool says `strict: false`; the Anthropic one says nothing of it
      const strict = mode.startsWith("responses") ? { strict: false } : {};
      assert.deepEqual(first.body.tools, [{
        type: "function",
        function: {
          name: "get_weather",
          description: "The weather of a city",
          parameters: SCHEMA,
          ...strict,
        },
      }]);
      const [, , assistant, tool] = second.body.messages;
      assert.deepEqual(assistant.tool_calls, [{
        id: "call_" + first.index + "_0",
        type: "function",
        function: { name: "get_weather", arguments: '{"city":"Paris"}' },
      }], mode);
      assert.equal(assistant.reasoning_content, "The weather tool knows.", mode);
      assert.deepEqual(tool, {
        role: "tool",
        tool_call_id: "call_" + first.index + "_0",
        content: "sunny",
      }, mode);
      const streamed = mode.endsWith("stream");
      for (const req of [first, second]) {
        assert.equal(req.body.stream === true, streamed, mode);
        if (streamed) assert.deepEqual(req.body.stream_options, { include_usage: true });
      }
    }
    // the Anthropic settings said in chat's words
    for (const req of [...requestsOf("anthropic-json"), ...requestsOf("anthropic-stream")]) {
      assert.equal(req.body.max_tokens, 512);
      assert.deepEqual(req.body.stop, ["END"]);
    }
    for (const req of requestsOf("responses-json")) assert.equal(req.body.max_tokens, 256);
  });

  it("the Anthropic SDK parsed Messages: a tool_use turn, then the answer, with usage", () => {
    const out = outputOf(traceOf("anthropic-json"));
    const [thinking, use] = out.first.content;
    assert.equal(thinking.type, "thinking");
    assert.equal(thinking.thinking, "The weather tool knows.");
    assert.equal(use.type, "tool_use");
    assert.equal(use.name, "get_weather");
    assert.deepEqual(use.input, { city: "Paris" });
    assert.equal(out.first.stop_reason, "tool_use");
    assert.deepEqual(
      [out.first.usage.input_tokens, out.first.usage.cache_read_input_tokens],
      [18, 12],
    );
    assert.equal(out.first.usage.output_tokens, 9);
    assert.deepEqual(out.second.content, [{ type: "text", text: "It is sunny in Paris." }]);
    assert.equal(out.second.stop_reason, "end_turn");
  });

  it("the Anthropic SDK's streams: events in Anthropic's order, tool input and text", () => {
    const out = outputOf(traceOf("anthropic-stream"));
    assert.equal(out.events[0], "message_start");
    assert.equal(out.events.at(-1), "message_stop");
    assert.ok(out.events.includes("content_block_delta"));
    const use = out.first.content.find((b: { type: string }) => b.type === "tool_use");
    assert.deepEqual(use.input, { city: "Paris" });
    assert.equal(out.first.stop_reason, "tool_use");
    assert.equal(out.first.usage.output_tokens, 9);
    assert.equal(out.first.usage.cache_read_input_tokens, 12);
    assert.equal(out.second.content[0].text, "It is sunny in Paris.");
    assert.ok(out.texts.length > 1, "the text came in pieces, as the provider streamed it");
    assert.equal(out.texts.join(""), "It is sunny in Paris.");
  });

  it("the openai SDK parsed Responses: a function call, then the answer, streamed too", () => {
    const json = outputOf(traceOf("responses-json"));
    const call = json.first.output.find((i: { type: string }) => i.type === "function_call");
    assert.equal(call.name, "get_weather");
    assert.deepEqual(JSON.parse(call.arguments), { city: "Paris" });
    assert.equal(json.first.usage.input_tokens, 30);
    assert.equal(json.first.usage.input_tokens_details.cached_tokens, 12);
    assert.equal(json.first.usage.output_tokens_details.reasoning_tokens, 3);
    assert.equal(json.text, "It is sunny in Paris.");

    const streamed = outputOf(traceOf("responses-stream"));
    const fc = streamed.first.output.find((i: { type: string }) => i.type === "function_call");
    assert.deepEqual(JSON.parse(fc.arguments), { city: "Paris" });
    assert.equal(streamed.text, "It is sunny in Paris.");
    assert.equal(streamed.types[0], "response.created");
    assert.equal(streamed.types.at(-1), "response.completed");
    assert.ok(streamed.types.filter((t: string) => t === "response.output_text.delta").length > 1);
    const message = streamed.completed.output.find((i: { type: string }) => i.type === "message");
    assert.equal(message.content[0].text, "It is sunny in Paris.");
    assert.equal(streamed.completed.usage.output_tokens, 7);
  });

  it("the trace records the program's calls: its endpoint, tools, tool calls and usage", () => {
    const endpoints: Record<string, string> = {
      "anthropic-json": "/v1/messages",
      "anthropic-stream": "/v1/messages",
      "responses-json": "/responses",
      "responses-stream": "/responses",
    };
    for (const [mode, endpoint] of Object.entries(endpoints)) {
      const trace = traceOf(mode);
      assert.equal(trace.ok, true, `${mode}: ${JSON.stringify(trace.errors)}`);
      assert.deepEqual(
        trace.calls.map((c) => [c.endpoint, c.model, c.finish_reason, c.error]),
        [[endpoint, "chat-run", "tool_calls", null], [endpoint, "chat-run", "stop", null]],
        mode,
      );
      assert.deepEqual(at(trace.calls, 0).usage, {
        prompt_tokens: 18,
        completion_tokens: 9,
        cached_input_tokens: 12,
        reasoning_tokens: 3,
        cost: null,
      }, mode);
      assert.deepEqual(trace.tools.map((t) => t.name), ["get_weather"]);
      const roles = trace.nodes.map((n) => [n.message.role, n.sampled]);
      assert.deepEqual(roles, [
        ["system", false],
        ["user", false],
        ["assistant", true],
        ["tool", false],
        ["assistant", true],
      ], mode);
      const call = at(trace.nodes, 2).message;
      assert.deepEqual(call.role === "assistant" ? call.tool_calls : null, [
        {
          id: `call_${at(requestsOf(mode), 0).index}_0`,
          name: "get_weather",
          arguments: '{"city":"Paris"}',
        },
      ]);
      assert.equal(
        (at(trace.nodes, 4).message as { content: string }).content,
        "It is sunny in Paris.",
      );
    }
  });

  it("what cannot be translated: the dialect's 400 error body, a failed episode, nothing sent", () => {
    const cases: [string, "anthropic" | "openai", RegExp][] = [
      ["anthropic-server-tool", "anthropic", /web_search.*web_search_20250305/],
      ["anthropic-tool-image", "anthropic", /image in a tool result/],
      ["responses-web-search", "openai", /built-in tool 'web_search'/],
    ];
    for (const [mode, shape, why] of cases) {
      const trace = traceOf(mode);
      const out = outputOf(trace);
      assert.equal(out.refused.status, 400, mode);
      // the Anthropic SDK keeps the whole body; the openai SDK keeps its `error` object
      const error = shape === "anthropic" ? out.refused.error.error : out.refused.error;
      if (shape === "anthropic") assert.equal(out.refused.error.type, "error");
      else assert.equal(error.code, "untranslatable_request");
      assert.equal(error.type, "invalid_request_error", mode);
      assert.match(error.message, /cannot translate/, mode);
      assert.match(error.message, why, mode);
      assert.equal(trace.ok, false, `${mode} passed for a clean episode`);
      assert.equal(at(trace.errors, 0).type, "ProviderError", mode);
      assert.match(at(trace.errors, 0).message, why, mode);
      assert.deepEqual(trace.calls.map((c) => [c.node, c.error?.status_code]), [[null, 400]]);
      assert.equal(requestsOf(mode).length, 0, `${mode} reached the provider`);
    }
    assert.equal(fake.requests.length, 8);
  });

  it("keeps the provider's key out of the run, and writes lines Python v1 loads", () => {
    for (const file of filesUnder(runDir)) {
      assert.ok(!readFileSync(file, "utf8").includes(KEY), `the provider key is in ${file}`);
    }
    assertRealPythonLoadsEpisodes(traceLines(runDir));
  });
});

describe("translated calls answered by the oracle (no provider at all)", () => {
  it("answers Messages and Responses programs through chat completions", async () => {
    const root = mkdtempSync(join(tmpdir(), "vf-translate-oracle-"));
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
        "--client.dialects",
        '["chat"]',
        "-o",
        root,
      ], root);
      const lines = traceLines(out.runDir);
      const trace = at((JSON.parse(at(lines, 0)) as Episode).traces, 0);
      assert.equal(trace.ok, true, JSON.stringify(trace.errors));
      const output = trace.info.agent_output as { stdout: string; stderr: string };
      const answer = JSON.parse(output.stdout);
      assert.deepEqual(answer.json.content, [{ type: "text", text: "42" }], output.stderr);
      assert.equal(answer.json.stop_reason, "end_turn");
      // rendered by the translation (the oracle's own Messages answers say "oracle" in their id)
      assert.match(answer.json.id, /^anthropic-[0-9a-f]{24}$/);
      assert.match(answer.streamed.id, /^anthropic-[0-9a-f]{24}$/);
      assert.equal(answer.streamed.content[0].text, "42");
      assert.equal(answer.text, "42");
      assert.deepEqual(trace.calls.map((c) => [c.endpoint, c.finish_reason, c.error]), [
        ["/v1/messages", "stop", null],
        ["/v1/messages", "stop", null],
        ["/responses", "stop", null],
      ]);
      assertRealPythonLoadsEpisodes(lines);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
