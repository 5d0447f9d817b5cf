/**
 * Translation on the interception server itself, against the strict chat-only fake
 * (tests/fakes/openai_server.ts): which dialect a call goes upstream in, a translated
 * stream relayed while the provider is still sending (never buffered to its end), the
 * provider's error in the program's error body, and requests refused in the program's
 * dialect because they cannot be translated (nothing sent upstream).
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../lib/interception/mod.ts";
import { providerDialect } from "../lib/interception/translate.ts";
import { openAIChat as chat } from "../lib/dialects/chat/mod.ts";
import { openAIResponses as responses } from "../lib/dialects/responses/mod.ts";
import { anthropicMessages as anthropic } from "../lib/dialects/anthropic/mod.ts";
import { createProviderClient, type ProviderClient } from "../lib/clients/provider_client.ts";
import { SseSplitter } from "../kit/wire/sse.ts";
import { type FakeOpenAI, type FakeReply, startFakeOpenAI } from "./fakes/openai_server.ts";
import { at } from "./_assert.ts";

const KEY = "sk-chat-relay-4c1d9b";

describe("the provider's dialect of a call", () => {
  it("is the program's own when served, else chat when served, else the first served", () => {
    assert.equal(providerDialect(anthropic, [chat, anthropic]), anthropic);
    assert.equal(providerDialect(anthropic, [responses, chat]), chat);
    assert.equal(providerDialect(anthropic, [responses]), responses);
    assert.equal(providerDialect(chat, [anthropic, responses]), anthropic);
  });
});

describe("translated calls through the interception server", () => {
  let reply: () => FakeReply = () => ({ content: "hello" });
  let fake: FakeOpenAI;
  let client: ProviderClient;
  let server: InterceptionServer;

  before(async () => {
    fake = await startFakeOpenAI({ apiKey: KEY, knownParams: true, script: () => reply() });
    client = createProviderClient({
      baseUrl: fake.url,
      apiKeyVar: "CHAT_KEY",
      env: { CHAT_KEY: KEY },
    });
    server = await startInterceptionServer({ providerDialects: [chat] });
  });
  after(async () => {
    await server.close();
    client.close();
    await fake.close();
  });

  function open() {
    const trace: SessionTrace = {
      id: crypto.randomUUID().replaceAll("-", ""),
      nodes: [],
      calls: [],
      tools: [],
      stop_condition: null,
    };
    const session = server.open({ trace, model: "run-model", sampling: {}, client, limits: {} });
    return { trace, session };
  }

  const post = (url: string, secret: string, body: unknown) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": secret },
      body: JSON.stringify(body),
    });

  it("relays a translated stream while the provider is still sending", async () => {
    let release: () => void = () => {};
    const pause = new Promise<void>((r) => (release = r));
    reply = () => ({ content: "alpha beta gamma delta", pauseAfterFirstChunk: pause });
    const { trace, session } = open();
    const before = fake.requests.length;
    const res = await post(`${server.url}/v1/messages`, session.secret, {
      model: "claude",
      max_tokens: 64,
      stream: true,
      messages: [{ role: "user", content: "go" }],
    });
    assert.equal(res.status, 200);
    const reader = res.body!.getReader();
    const splitter = new SseSplitter();
    const events: { event: string | null; data: string | null }[] = [];
    // the first text delta arrives while the provider holds back the rest of its answer
    while (!events.some((e) => e.event === "content_block_delta")) {
      const { value, done } = await reader.read();
      assert.ok(!done, "the stream ended before the provider was released");
      events.push(...splitter.push(value));
    }
    assert.equal(trace.calls.length, 0, "nothing recorded mid-stream");
    assert.equal(at(events, 0).event, "message_start");
    release();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      events.push(...splitter.push(value));
    }
    events.push(...splitter.end());
    assert.equal(events.at(-1)?.event, "message_stop");
    const text = events
      .filter((e) => e.event === "content_block_delta")
      .map((e) => JSON.parse(e.data!).delta.text)
      .join("");
    assert.equal(text, "alpha beta gamma delta");
    const upstream = at(fake.requests, before);
    assert.equal(upstream.path, "/v1/chat/completions");
    assert.deepEqual(upstream.body.messages, [{ role: "user", content: "go" }]);
    assert.equal(trace.calls.length, 1);
    assert.equal(at(trace.calls, 0).endpoint, "/v1/messages");
    assert.equal(at(trace.calls, 0).finish_reason, "stop");
  });

  it("a provider's error mid-stream ends the program's stream with its dialect's error event", async () => {
    reply = () => ({ content: "half an answer", streamError: "generation failed on the GPU" });
    const { trace, session } = open();
    const res = await post(`${server.url}/v1/responses`, session.secret, {
      model: "gpt",
      input: "go",
      stream: true,
    });
    assert.equal(res.status, 200);
    const splitter = new SseSplitter();
    const events = [...splitter.push(new Uint8Array(await res.arrayBuffer())), ...splitter.end()];
    const types = events.map((e) => e.event);
    assert.equal(types[0], "response.created");
    assert.ok(types.includes("response.output_text.delta"), types.join());
    assert.equal(types.at(-1), "error");
    assert.equal(JSON.parse(events.at(-1)!.data!).message, "generation failed on the GPU");
    assert.ok(!types.includes("response.completed"), "a failed answer passed for a complete one");
    assert.match(at(trace.calls, 0).error?.message ?? "", /generation failed on the GPU/);
    assert.equal(at(trace.calls, 0).node, null);
    assert.ok(session.providerError);
  });

  it("words the provider's error in the program's error body, with its status", async () => {
    reply = () => ({ status: 503, error: "the chat server is overloaded" });
    const { trace, session } = open();
    const res = await post(`${server.url}/v1/messages`, session.secret, {
      model: "claude",
      max_tokens: 64,
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(res.status, 503);
    assert.deepEqual(await res.json(), {
      type: "error",
      error: { type: "api_error", message: "the chat server is overloaded" },
    });
    assert.equal(at(trace.calls, 0).error?.status_code, 503);
    assert.equal(session.providerError?.statusCode, 503);
  });

  it("refuses, in the program's dialect, what it cannot translate; sends nothing", async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      [
        "/v1/responses",
        { model: "m", input: "hi", previous_response_id: "resp_1" },
        /stored response \(previous_response_id\)/,
      ],
      [
        "/v1/responses",
        { model: "m", input: [{ role: "user", content: [{ type: "input_file", file_id: "f" }] }] },
        /'input_file' content part/,
      ],
      [
        "/v1/messages",
        {
          model: "m",
          max_tokens: 8,
          messages: [{ role: "user", content: [{ type: "document", source: {} }] }],
        },
        /'document' content block/,
      ],
      [
        "/v1/messages",
        {
          model: "m",
          max_tokens: 8,
          mcp_servers: [{}],
          messages: [{ role: "user", content: "x" }],
        },
        /MCP servers/,
      ],
      [
        "/v1/messages",
        {
          model: "m",
          max_tokens: 8,
          messages: [{ role: "user", content: "x" }, { role: "assistant", content: "{" }],
        },
        /prefilled assistant turn/,
      ],
    ];
    const before = fake.requests.length;
    for (const [path, body, why] of cases) {
      const { trace, session } = open();
      const res = await post(`${server.url}${path}`, session.secret, body);
      assert.equal(res.status, 400, path);
      assert.equal(res.headers.get("x-should-retry"), "false");
      const json = await res.json();
      const error = json.error; // both shapes keep it under `error`
      if (path === "/v1/messages") assert.equal(json.type, "error");
      else assert.equal(error.code, "untranslatable_request");
      assert.match(error.message, /^cannot translate this \S+ request .*serves only openai-chat/);
      assert.match(error.message, why);
      assert.equal(session.providerError?.statusCode, 400);
      assert.deepEqual(trace.calls.map((c) => [c.node, c.error?.type]), [[null, "ProviderError"]]);
    }
    assert.equal(fake.requests.length, before, "a refused request reached the provider");
  });

  it("refuses side requests, which have nowhere to go, with a 404 in the dialect's body", async () => {
    const { trace, session } = open();
    const before = fake.requests.length;
    const res = await post(`${server.url}/v1/messages/count_tokens`, session.secret, {
      model: "claude",
      messages: [{ role: "user", content: "hi" }],
    });
    assert.equal(res.status, 404);
    const body = await res.json();
    assert.equal(body.type, "error");
    assert.equal(body.error.type, "not_found_error");
    assert.match(body.error.message, /count_tokens is not served: .*serves only openai-chat/);
    const counted = await post(`${server.url}/v1/responses/input_tokens`, session.secret, {
      model: "gpt",
      input: "hi",
    });
    assert.equal(counted.status, 404);
    assert.match((await counted.json()).error.message, /input_tokens is not served/);
    assert.equal(fake.requests.length, before);
    assert.equal(trace.calls.length, 0);
  });

  it("refuses a chat program when the provider serves only a dialect it cannot reach", async () => {
    const only = await startInterceptionServer({ providerDialects: [anthropic] });
    try {
      const trace: SessionTrace = {
        id: "t",
        nodes: [],
        calls: [],
        tools: [],
        stop_condition: null,
      };
      const session = only.open({ trace, model: "m", sampling: {}, client, limits: {} });
      const res = await fetch(`${only.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${session.secret}` },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
      });
      assert.equal(res.status, 400);
      assert.match((await res.json()).error.message, /no translation between the two/);
    } finally {
      await only.close();
    }
  });
});
