import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { ProviderError } from "../kit/errors.ts";
import {
  type InterceptionServer,
  type SessionOptions,
  type SessionTrace,
  startInterceptionServer,
} from "../lib/interception/mod.ts";
import { createProviderClient, type ProviderClient } from "../lib/clients/provider_client.ts";
import { outcomeFromCompletion, parseChatUsage } from "../lib/dialects/chat/codec.ts";
import { ChatStreamAccumulator } from "../lib/dialects/chat/stream.ts";
import { SseSplitter } from "../kit/wire/sse.ts";
import { branches, lastReply, numTurns } from "../kit/trace/derived.ts";
import {
  type FakeOpenAI,
  type FakeReply,
  type FakeScript,
  startFakeOpenAI,
} from "./fakes/openai_server.ts";
import { at } from "./_assert.ts";

const KEY = "sk-upstream-93b1d7c2e5";

function newTrace(): SessionTrace {
  return {
    id: crypto.randomUUID().replaceAll("-", ""),
    nodes: [],
    calls: [],
    tools: [],
    stop_condition: null,
  };
}

interface Harness {
  fake: FakeOpenAI;
  client: ProviderClient;
  close(): Promise<void>;
}

async function upstream(script?: FakeScript): Promise<Harness> {
  const fake = await startFakeOpenAI(script ? { script, apiKey: KEY } : { apiKey: KEY });
  const client = createProviderClient({
    baseUrl: fake.url,
    apiKeyVar: "UPSTREAM_KEY",
    env: { UPSTREAM_KEY: KEY },
  });
  return {
    fake,
    client,
    close: async () => {
      client.close();
      await fake.close();
    },
  };
}

function post(
  endpoint: string,
  secret: string | null,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${endpoint}/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...(secret === null ? {} : { authorization: `Bearer ${secret}` }),
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

const userMsg = (content: string) => ({ role: "user", content });

describe("chat dialect pieces", () => {
  it("outcomeFromCompletion() keeps nothing of the completion: a harness may be handed it", () => {
    const completion = {
      choices: [{
        message: {
          role: "assistant",
          content: "hi",
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
          provider_state: { opaque: ["s1"] },
        },
        finish_reason: "tool_calls",
      }],
      usage: { prompt_tokens: 3, completion_tokens: 1 },
    };
    const outcome = outcomeFromCompletion(completion)!;
    const before = JSON.stringify(outcome);
    const message = completion.choices[0]!.message;
    message.tool_calls[0]!.function.name = "changed";
    message.provider_state.opaque.push("changed");
    completion.usage.prompt_tokens = 99;
    assert.equal(JSON.stringify(outcome), before);
    assert.deepEqual(
      outcome.message.role === "assistant" ? outcome.message.provider_state : null,
      { opaque: ["s1"] },
    );
  });

  it("parseChatUsage() splits cached tokens out of the prompt and reads reasoning tokens", () => {
    assert.deepEqual(
      parseChatUsage({
        prompt_tokens: 100,
        completion_tokens: 30,
        prompt_tokens_details: { cached_tokens: 40 },
        completion_tokens_details: { reasoning_tokens: 12 },
      }),
      {
        prompt_tokens: 60,
        completion_tokens: 30,
        cached_input_tokens: 40,
        reasoning_tokens: 12,
        cost: null,
      },
    );
    assert.equal(parseChatUsage(null), null);
  });

  it("SseSplitter splits events across arbitrary chunk boundaries and CRLF", () => {
    const s = new SseSplitter();
    const text = 'data: {"a":1}\r\n\r\n: keepalive\n\ndata: x\ndata: y\n\ndata: [DONE]\n\n';
    const events = [];
    for (const ch of text) events.push(...s.push(new TextEncoder().encode(ch)));
    events.push(...s.end());
    assert.deepEqual(events.map((e) => e.data), ['{"a":1}', null, "x\ny", "[DONE]"]);
    assert.equal(at(events, 1).raw, ": keepalive");
  });

  it("ChatStreamAccumulator joins content, reasoning and tool-call argument deltas", () => {
    const acc = new ChatStreamAccumulator();
    const chunk = (delta: unknown, finish: string | null = null) => ({
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    acc.add(chunk({ role: "assistant", reasoning_content: "th" }));
    acc.add(chunk({ reasoning_content: "ink" }));
    acc.add(chunk({ content: "a" }));
    acc.add(
      chunk({
        tool_calls: [{
          index: 0,
          id: "c0",
          type: "function",
          function: { name: "f", arguments: '{"x"' },
        }],
      }),
    );
    acc.add(
      chunk({
        tool_calls: [{
          index: 1,
          id: "c1",
          type: "function",
          function: { name: "g", arguments: "{}" },
        }],
      }),
    );
    acc.add(chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] }));
    acc.add(chunk({}, "tool_calls"));
    acc.add({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2 } });
    const out = acc.result();
    assert.deepEqual(out.message, {
      role: "assistant",
      content: "a",
      reasoning_content: "think",
      tool_calls: [{ id: "c0", name: "f", arguments: '{"x":1}' }, {
        id: "c1",
        name: "g",
        arguments: "{}",
      }],
    });
    assert.equal(out.finishReason, "tool_calls");
    assert.equal(out.usage?.prompt_tokens, 5);
  });
});

describe("interception server", () => {
  let server: InterceptionServer;
  before(async () => {
    server = await startInterceptionServer();
  });
  after(async () => {
    await server.close();
  });

  function open(h: Harness, extra: Partial<SessionOptions> = {}) {
    const trace = newTrace();
    const session = server.open({
      trace,
      model: "run-model",
      sampling: {},
      client: h.client,
      limits: {},
      ...extra,
    });
    return { trace, session };
  }

  it("serves GET /v1/models to the official SDK and refuses stored responses clearly", async () => {
    const h = await upstream();
    try {
      const { session, trace } = open(h, { model: "org/run-model" });
      const sdk = new OpenAI({ baseURL: session.endpoint, apiKey: session.secret, maxRetries: 0 });
      const listed = [];
      for await (const m of sdk.models.list()) listed.push(m.id);
      assert.deepEqual(listed, ["org/run-model"]);
      assert.equal((await sdk.models.retrieve("org/run-model")).id, "org/run-model");
      await assert.rejects(sdk.models.retrieve("gpt-x"), (e: unknown) => {
        assert.ok(e instanceof OpenAI.NotFoundError);
        assert.match(e.message, /model 'gpt-x' does not exist here; this run's model is/);
        return true;
      });
      await assert.rejects(
        sdk.responses.retrieve("resp_123"),
        (e: unknown) => {
          assert.ok(e instanceof OpenAI.NotFoundError);
          assert.match(e.message, /Stored responses \(\/v1\/responses\/<id>\) are not served/);
          assert.match(e.message, /POST \/v1\/responses/);
          return true;
        },
      );
      const other = await fetch(`${session.endpoint}/embeddings`, { method: "POST", body: "{}" });
      assert.equal(other.status, 404);
      assert.match((await other.json()).error.message, /answers POST \/v1\/chat\/completions/);
      const unauth = await fetch(`${session.endpoint}/models`);
      assert.equal(unauth.status, 401);
      await unauth.body?.cancel();
      assert.equal(h.fake.requests.length, 0, "nothing went upstream");
      assert.equal(trace.calls.length, 0);
      session.close();
    } finally {
      await h.close();
    }
  });

  it("streams without stream_options once the provider refuses the field", async () => {
    // a provider of the kind that rejects unknown request fields (HTTP 400 naming it)
    const bodies: Record<string, unknown>[] = [];
    const provider = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (d) => raw += d);
      req.on("end", () => {
        const body = JSON.parse(raw);
        bodies.push(body);
        if ("stream_options" in body) {
          res.writeHead(400, { "content-type": "application/json" });
          res.end(JSON.stringify({
            error: { message: "Unrecognized request argument supplied: stream_options" },
          }));
          return;
        }
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: unknown, finish: string | null) =>
          `data: ${
            JSON.stringify({
              id: "c1",
              object: "chat.completion.chunk",
              created: 0,
              model: body.model,
              choices: [{ index: 0, delta, finish_reason: finish }],
            })
          }\n\n`;
        res.end(
          chunk({ role: "assistant", content: "hello" }, null) + chunk({}, "stop") +
            "data: [DONE]\n\n",
        );
      });
    });
    await new Promise<void>((r) => provider.listen(0, "127.0.0.1", r));
    const client = createProviderClient({
      baseUrl: `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`,
      apiKeyVar: null,
    });
    try {
      const { session, trace } = open({ client } as unknown as Harness);
      const sdk = new OpenAI({ baseURL: session.endpoint, apiKey: session.secret, maxRetries: 0 });
      for (let i = 0; i < 2; i++) {
        const stream = await sdk.chat.completions.create({
          model: "x",
          messages: [{ role: "user", content: `hi ${i}` }],
          stream: true,
        });
        let text = "";
        for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
        assert.equal(text, "hello");
      }
      // the first call was refused once with the field, then sent without it; the second
      // call went without it at once
      assert.deepEqual(bodies.map((b) => "stream_options" in b), [true, false, false]);
      assert.equal(trace.calls.length, 2);
      assert.ok(trace.calls.every((c) => c.error === null));
      session.close();
    } finally {
      client.close();
      await new Promise<void>((r) => {
        provider.close(() => r());
        provider.closeAllConnections();
      });
    }
  });

  it("answers 401 to an unknown secret without echoing it, and 409 after close", async () => {
    const h = await upstream();
    try {
      const bogus = "not-a-real-secret-51f0";
      const res = await post(`${server.url}/v1`, bogus, { model: "x", messages: [userMsg("hi")] });
      assert.equal(res.status, 401);
      const text = await res.text();
      assert.ok(!text.includes(bogus));
      assert.equal(typeof JSON.parse(text).error.message, "string");
      const none = await post(`${server.url}/v1`, null, { model: "x", messages: [userMsg("hi")] });
      assert.equal(none.status, 401);
      await none.body?.cancel();

      const { session, trace } = open(h);
      assert.equal(session.endpoint, `${server.url}/v1`);
      session.close();
      const closed = await post(session.endpoint, session.secret, {
        model: "x",
        messages: [userMsg("hi")],
      });
      assert.equal(closed.status, 409);
      assert.ok(!(await closed.text()).includes(session.secret));
      assert.equal(h.fake.requests.length, 0);
      assert.equal(trace.calls.length, 0);
    } finally {
      await h.close();
    }
  });

  it("overrides model and sampling, forwards the session id and the provider key only", async () => {
    const h = await upstream();
    try {
      const { trace, session } = open(h, {
        sampling: { temperature: 0.3, max_tokens: 64, top_p: null, top_k: 5 },
      });
      const res = await post(
        session.endpoint,
        session.secret,
        { model: "program-model", temperature: 1.5, top_p: 0.5, messages: [userMsg("ping")] },
        { "openai-beta": "feature=1", "x-stainless-retry-count": "0" },
      );
      assert.equal(res.status, 200);
      const json = await res.json();
      assert.equal(json.choices[0].message.content, "ping");
      const seen = at(h.fake.requests, 0);
      assert.equal(seen.body.model, "run-model");
      assert.equal(seen.body.temperature, 0.3);
      assert.equal(seen.body.max_tokens, 64);
      assert.equal(seen.body.top_p, 0.5, "null sampling keys do not overlay");
      assert.equal(seen.body.top_k, 5, "extras overlay too");
      assert.equal(seen.headers["x-session-id"], trace.id);
      assert.equal(seen.headers["authorization"], `Bearer ${KEY}`);
      assert.equal(seen.headers["openai-beta"], "feature=1");
      assert.ok(!JSON.stringify(seen.headers).includes(session.secret));
      assert.deepEqual(at(trace.calls, 0).sampling, {
        temperature: 0.3,
        max_tokens: 64,
        top_p: 0.5,
        top_k: 5,
      });
      assert.equal(at(trace.calls, 0).model, "run-model");
    } finally {
      await h.close();
    }
  });

  it("records a ModelCall per exchange with timing, usage, finish reason and node", async () => {
    const h = await upstream(() => ({
      content: "four",
      reasoning_content: "2+2",
      usage: {
        prompt_tokens: 120,
        completion_tokens: 17,
        prompt_tokens_details: { cached_tokens: 100 },
        completion_tokens_details: { reasoning_tokens: 9 },
      },
    }));
    try {
      const { trace, session } = open(h, { sampling: { temperature: 0 } });
      const res = await post(session.endpoint, session.secret, {
        model: "p",
        seed: 7,
        messages: [{ role: "system", content: "be brief" }, userMsg("2+2?")],
      });
      assert.equal(res.status, 200);
      await res.json();
      assert.equal(trace.calls.length, 1);
      const call = at(trace.calls, 0);
      assert.equal(call.node, 2);
      assert.equal(call.endpoint, "/chat/completions");
      assert.equal(call.finish_reason, "stop");
      assert.equal(call.error, null);
      assert.deepEqual(call.sampling, { temperature: 0, seed: 7 });
      assert.deepEqual(call.usage, {
        prompt_tokens: 20,
        completion_tokens: 17,
        cached_input_tokens: 100,
        reasoning_tokens: 9,
        cost: null,
      });
      assert.ok(call.time.start !== null && call.time.end !== null);
      assert.ok(call.time.end! > call.time.start!);
      assert.ok(call.time.start! > 1.6e9 && call.time.start! < 1e11, "epoch seconds");
      assert.ok(session.modelSeconds > 0);
      assert.equal(at(trace.nodes, 2).sampled, true);
      assert.deepEqual(at(trace.nodes, 2).message, {
        role: "assistant",
        content: "four",
        reasoning_content: "2+2",
      });
    } finally {
      await h.close();
    }
  });

  it("builds the graph of a two-turn tool conversation through the openai client", async () => {
    const tools = [{
      type: "function" as const,
      function: {
        name: "echo_back",
        description: "Echo a message",
        parameters: {
          type: "object",
          properties: { message: { type: "string" } },
          required: ["message"],
        },
        strict: true,
      },
    }];
    const h = await upstream((body, i) =>
      i === 0
        ? { tool_calls: [{ id: "call_a", name: "echo_back", arguments: { message: "hi" } }] }
        : { content: `got ${body.messages.at(-1).content}` }
    );
    try {
      const { trace, session } = open(h);
      const openai = new OpenAI({
        baseURL: session.endpoint,
        apiKey: session.secret,
        maxRetries: 0,
      });
      const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
        { role: "system", content: "use tools" },
        { role: "user", content: "say hi" },
      ];
      const first = await openai.chat.completions.create({ model: "x", messages, tools });
      const toolCall = at(at(first.choices, 0).message.tool_calls ?? [], 0);
      assert.equal(toolCall.type, "function");
      messages.push(at(first.choices, 0).message);
      messages.push({ role: "tool", tool_call_id: toolCall.id, content: "hi [ok]" });
      const second = await openai.chat.completions.create({ model: "x", messages, tools });
      assert.equal(at(second.choices, 0).message.content, "got hi [ok]");

      assert.deepEqual(trace.nodes.map((n) => n.message.role), [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
      ]);
      assert.deepEqual(trace.nodes.map((n) => n.parent), [null, 0, 1, 2, 3]);
      assert.deepEqual(trace.nodes.map((n) => n.sampled), [false, false, true, false, true]);
      assert.deepEqual(at(trace.nodes, 2).message, {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_a", name: "echo_back", arguments: '{"message":"hi"}' }],
      });
      assert.equal(branches(trace.nodes).length, 1);
      assert.equal(numTurns(trace), 2);
      assert.equal(lastReply(trace), "got hi [ok]");
      assert.deepEqual(trace.calls.map((c) => c.node), [2, 4]);
      assert.deepEqual(trace.calls.map((c) => c.finish_reason), ["tool_calls", "stop"]);
      assert.deepEqual(trace.tools, [{
        name: "echo_back",
        description: "Echo a message",
        parameters: at(tools, 0).function.parameters,
        strict: true,
      }]);
    } finally {
      await h.close();
    }
  });

  it("refuses a call past max_turns with 400 `rollout stopped: max_turns` and records it", async () => {
    const h = await upstream();
    try {
      const { trace, session } = open(h, { limits: { max_turns: 1 } });
      const ok = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("one")],
      });
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
      const refused = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("two")],
      });
      assert.equal(refused.status, 400);
      const err = await refused.json();
      assert.equal(err.error.message, "rollout stopped: max_turns");
      assert.equal(trace.stop_condition, "max_turns");
      assert.equal(session.stopCondition, "max_turns");
      assert.equal(h.fake.requests.length, 1);
      assert.equal(trace.calls.length, 1);
      // Once stopped, every later call is refused with the same condition.
      const again = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("3")],
      });
      assert.equal(again.status, 400);
      assert.equal((await again.json()).error.message, "rollout stopped: max_turns");
    } finally {
      await h.close();
    }
  });

  it("applies token limits over recorded usage (input includes cached tokens)", async () => {
    const usage = {
      prompt_tokens: 50,
      completion_tokens: 10,
      prompt_tokens_details: { cached_tokens: 30 },
    };
    const h = await upstream(() => ({ content: "x", usage }));
    try {
      const cases: [SessionOptions["limits"], string][] = [
        [{ max_input_tokens: 50 }, "max_input_tokens"],
        [{ max_output_tokens: 10 }, "max_output_tokens"],
        [{ max_total_tokens: 60 }, "max_total_tokens"],
      ];
      for (const [limits, condition] of cases) {
        const { trace, session } = open(h, { limits: { ...limits, max_turns: 10 } });
        const first = await post(session.endpoint, session.secret, {
          model: "p",
          messages: [userMsg("a")],
        });
        assert.equal(first.status, 200, condition);
        await first.body?.cancel();
        const second = await post(session.endpoint, session.secret, {
          model: "p",
          messages: [userMsg("b")],
        });
        assert.equal(second.status, 400, condition);
        assert.equal((await second.json()).error.message, `rollout stopped: ${condition}`);
        assert.equal(trace.stop_condition, condition);
      }
      // Just below every limit: the second call goes through.
      const { session } = open(h, {
        limits: { max_input_tokens: 51, max_output_tokens: 11, max_total_tokens: 61 },
      });
      for (const m of ["a", "b"]) {
        const r = await post(session.endpoint, session.secret, {
          model: "p",
          messages: [userMsg(m)],
        });
        assert.equal(r.status, 200);
        await r.body?.cancel();
      }
    } finally {
      await h.close();
    }
  });

  it("stops on a stop check's name and keeps the first stop condition", async () => {
    const h = await upstream();
    try {
      let answer: string | null = null;
      const { trace, session } = open(h, { stops: () => Promise.resolve(answer) });
      const ok = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("a")],
      });
      assert.equal(ok.status, 200);
      await ok.body?.cancel();
      answer = "single_turn";
      trace.stop_condition = null;
      const r = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("b")],
      });
      assert.equal(r.status, 400);
      assert.equal((await r.json()).error.message, "rollout stopped: single_turn");
      assert.equal(trace.stop_condition, "single_turn");

      const other = open(h, { limits: { max_turns: 0 } });
      other.trace.stop_condition = "user_closed";
      const r2 = await post(other.session.endpoint, other.session.secret, {
        model: "p",
        messages: [userMsg("c")],
      });
      assert.equal(r2.status, 400);
      assert.equal((await r2.json()).error.message, "rollout stopped: user_closed");
      assert.equal(other.trace.stop_condition, "user_closed");
    } finally {
      await h.close();
    }
  });

  it("relays a provider 500 with its status and body and stashes ProviderError(500)", async () => {
    const h = await upstream(() => ({ status: 500, error: "the model fell over" }));
    try {
      const { trace, session } = open(h);
      const res = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("a")],
      });
      assert.equal(res.status, 500);
      const body = await res.json();
      assert.equal(body.error.message, "the model fell over");
      assert.ok(session.providerError instanceof ProviderError);
      assert.equal(session.providerError?.statusCode, 500);
      assert.equal(trace.calls.length, 1);
      assert.equal(at(trace.calls, 0).node, null);
      assert.equal(at(trace.calls, 0).error?.type, "ProviderError");
      assert.equal(at(trace.calls, 0).error?.status_code, 500);
      assert.match(at(trace.calls, 0).error?.message ?? "", /the model fell over/);
      assert.equal(trace.nodes.length, 0);
      assert.equal(trace.stop_condition, null);
    } finally {
      await h.close();
    }
  });

  it("turns a context-length error into the context_length stop and a 400", async () => {
    const h = await upstream(() => ({
      status: 400,
      error: {
        message:
          "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",
        code: "context_length_exceeded",
      },
    }));
    try {
      const { trace, session } = open(h);
      const res = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("long")],
      });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).error.message, "rollout stopped: context_length");
      assert.equal(trace.stop_condition, "context_length");
      assert.equal(session.providerError, null);
      assert.equal(trace.calls.length, 1);
      assert.equal(at(trace.calls, 0).node, null);
    } finally {
      await h.close();
    }
  });

  it("relays SSE event by event and reassembles the message for the graph", async () => {
    let release: () => void = () => {};
    const pause = new Promise<void>((r) => (release = r));
    const h = await upstream(() => ({
      content: "alpha beta gamma",
      reasoning_content: "hmm ok",
      tool_calls: [{ id: "call_s", name: "look", arguments: { q: "x", n: 2 } }],
      usage: { prompt_tokens: 11, completion_tokens: 7 },
      pauseAfterFirstChunk: pause,
    }));
    try {
      const { trace, session } = open(h);
      const res = await post(session.endpoint, session.secret, {
        model: "p",
        stream: true,
        messages: [userMsg("go")],
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
      const reader = res.body!.getReader();
      const splitter = new SseSplitter();
      const events: (string | null)[] = [];
      // The first events arrive while the upstream is still paused mid-stream.
      while (events.length < 2) {
        const { value, done } = await reader.read();
        assert.ok(!done, "stream ended early");
        events.push(...splitter.push(value).map((e) => e.data));
      }
      assert.equal(trace.calls.length, 0, "nothing committed mid-stream");
      release();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        events.push(...splitter.push(value).map((e) => e.data));
      }
      events.push(...splitter.end().map((e) => e.data));
      assert.equal(events.at(-1), "[DONE]");
      const chunks = events.slice(0, -1).map((d) => JSON.parse(d!));
      assert.ok(
        chunks.every((c) => c.choices.length > 0),
        "usage-only chunk withheld when not asked",
      );
      const program = new ChatStreamAccumulator();
      for (const c of chunks) program.add(c);
      assert.equal(program.result().message.content, "alpha beta gamma");

      // Upstream was asked for usage; the trace has it and the reassembled message.
      assert.deepEqual(at(h.fake.requests, 0).body.stream_options, { include_usage: true });
      assert.deepEqual(at(trace.nodes, 1).message, {
        role: "assistant",
        content: "alpha beta gamma",
        reasoning_content: "hmm ok",
        tool_calls: [{ id: "call_s", name: "look", arguments: '{"q":"x","n":2}' }],
      });
      assert.equal(at(trace.calls, 0).usage?.prompt_tokens, 11);
      assert.equal(at(trace.calls, 0).usage?.completion_tokens, 7);
      assert.equal(at(trace.calls, 0).finish_reason, "tool_calls");
      assert.equal(at(trace.calls, 0).node, 1);
    } finally {
      release();
      await h.close();
    }
  });

  it("passes the usage chunk on when the program asked for it", async () => {
    const h = await upstream(() => ({
      content: "hey",
      usage: { prompt_tokens: 3, completion_tokens: 1 },
    }));
    try {
      const { session } = open(h);
      const res = await post(session.endpoint, session.secret, {
        model: "p",
        stream: true,
        stream_options: { include_usage: true },
        messages: [userMsg("go")],
      });
      const splitter = new SseSplitter();
      const events = [...splitter.push(await res.text()), ...splitter.end()];
      const usageChunk = events.map((e) => e.data).filter((d) => d && d !== "[DONE]")
        .map((d) => JSON.parse(d!)).find((c) => c.choices.length === 0);
      assert.equal(usageChunk?.usage.prompt_tokens, 3);
    } finally {
      await h.close();
    }
  });

  it("answers an SDK retry from the record; the upstream sees one request", async () => {
    const h = await upstream((_b, i) => `answer ${i}`);
    try {
      const { trace, session } = open(h);
      const body = JSON.stringify({ model: "p", messages: [userMsg("once")] });
      const first = await post(session.endpoint, session.secret, body, {
        "x-stainless-retry-count": "0",
      });
      const firstJson = await first.json();
      const retry = await post(session.endpoint, session.secret, body, {
        "x-stainless-retry-count": "1",
      });
      assert.equal(retry.status, 200);
      assert.deepEqual(await retry.json(), firstJson);
      assert.equal(h.fake.requests.length, 1);
      assert.equal(trace.calls.length, 1);
      assert.equal(numTurns(trace), 1);
      // A retry of a different body is a new call.
      const other = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("twice")],
      }, {
        "x-stainless-retry-count": "1",
      });
      assert.equal((await other.json()).choices[0].message.content, "answer 1");
      assert.equal(h.fake.requests.length, 2);
      // A long body (keyed by its hash, not its text) is answered from the record too.
      const long = JSON.stringify({ model: "p", messages: [userMsg("long ".repeat(1000))] });
      const longFirst = await post(session.endpoint, session.secret, long, {
        "x-stainless-retry-count": "0",
      });
      const longJson = await longFirst.json();
      const longRetry = await post(session.endpoint, session.secret, long, {
        "x-stainless-retry-count": "1",
      });
      assert.deepEqual(await longRetry.json(), longJson);
      assert.equal(longJson.choices[0].message.content, "answer 2");
      assert.equal(h.fake.requests.length, 3);
    } finally {
      await h.close();
    }
  });

  it("joins an in-flight call with its retry (streaming too)", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let arrived: () => void = () => {};
    const received = new Promise<void>((r) => (arrived = r));
    const h = await upstream(async (): Promise<FakeReply> => {
      arrived();
      await gate;
      return { content: "slow answer" };
    });
    try {
      const { trace, session } = open(h);
      const body = JSON.stringify({ model: "p", stream: true, messages: [userMsg("slow")] });
      const original = post(session.endpoint, session.secret, body);
      await received;
      const retry = post(session.endpoint, session.secret, body, {
        "x-stainless-retry-count": "1",
      });
      release();
      const [a, b] = await Promise.all([
        original.then((r) => r.text()),
        retry.then((r) => r.text()),
      ]);
      assert.equal(a, b);
      assert.match(a, /slow /);
      assert.equal(h.fake.requests.length, 1);
      assert.equal(trace.calls.length, 1);
    } finally {
      release();
      await h.close();
    }
  });

  it("works with the official openai client, non-streaming and streaming", async () => {
    const h = await upstream((body) => `echo: ${body.messages.at(-1).content}`);
    try {
      const { trace, session } = open(h);
      const openai = new OpenAI({ baseURL: session.endpoint, apiKey: session.secret });
      const plain = await openai.chat.completions.create({
        model: "whatever",
        messages: [{ role: "user", content: "one" }],
      });
      assert.equal(at(plain.choices, 0).message.content, "echo: one");
      assert.equal(plain.model, "run-model");

      const stream = await openai.chat.completions.create({
        model: "whatever",
        stream: true,
        messages: [
          { role: "user", content: "one" },
          { role: "assistant", content: "echo: one" },
          { role: "user", content: "two" },
        ],
      });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      assert.equal(text, "echo: two");
      assert.equal(numTurns(trace), 2);
      assert.equal(branches(trace.nodes).length, 1);
      assert.equal(lastReply(trace), "echo: two");
      assert.equal(trace.calls.length, 2);
      assert.ok(trace.calls.every((c) => c.error === null && c.usage !== null));
    } finally {
      await h.close();
    }
  });

  it("answers 503 when the provider is unreachable and stashes the ProviderError", async () => {
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, "127.0.0.1", r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const client = createProviderClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKeyVar: "K",
      env: { K: KEY },
    });
    try {
      const trace = newTrace();
      const session = server.open({ trace, model: "m", sampling: {}, client, limits: {} });
      const res = await post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("a")],
      });
      assert.equal(res.status, 503);
      const text = await res.text();
      assert.ok(!text.includes(KEY) && !text.includes(session.secret));
      assert.equal(session.providerError?.statusCode, 503);
      assert.ok(!session.providerError!.message.includes(KEY));
      assert.equal(trace.calls.length, 1);
      assert.ok(
        at(trace.calls, 0).error && !JSON.stringify(at(trace.calls, 0).error).includes(KEY),
      );
    } finally {
      client.close();
    }
  });

  it("records an in-flight call when the session closes and cuts the program off", async () => {
    let arrived: () => void = () => {};
    const received = new Promise<void>((r) => (arrived = r));
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const h = await upstream(async () => {
      arrived();
      await gate;
      return "too late";
    });
    try {
      const { trace, session } = open(h);
      const pending = post(session.endpoint, session.secret, {
        model: "p",
        messages: [userMsg("a")],
      });
      await received;
      session.close();
      assert.equal(trace.calls.length, 1);
      assert.deepEqual(at(trace.calls, 0).error, {
        type: "CancelledError",
        message: "rollout session closed",
        status_code: null,
        traceback: null,
      });
      const res = await pending;
      assert.equal(res.status, 409);
      await res.body?.cancel();
      release();
      assert.equal(trace.calls.length, 1);
      assert.equal(trace.nodes.length, 0);
    } finally {
      release();
      await h.close();
    }
  });
});
