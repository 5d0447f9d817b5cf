/**
 * Interception hooks in every dialect, through the official SDKs against strict loopback
 * providers: a response rewrite reaches the program in its own dialect, streamed or not; a
 * response stop records the turn and answers the dialect's `rollout stopped` error; a request
 * stop records the prompt and sends nothing upstream.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";
import { createProviderClient, type ProviderClient } from "../lib/clients/provider_client.ts";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../lib/interception/mod.ts";
import type { SessionHooks } from "../lib/interception/hooks.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { startFakeResponses } from "./fakes/responses_server.ts";
import { startFakeAnthropic } from "./fakes/anthropic_server.ts";
import { ALL_DIALECTS } from "../lib/dialects/mod.ts";

const KEY = "sk-hooks-dialects";
const REPLY = "please BLOCK this";

type Program = (endpoint: string, root: string, secret: string, stream: boolean) => Promise<string>;

/** Each dialect's official SDK making one call; returns the reply text. */
const PROGRAMS: Record<string, Program> = {
  chat: async (endpoint, _root, secret, stream) => {
    const sdk = new OpenAI({ baseURL: endpoint, apiKey: secret, maxRetries: 0 });
    const messages = [{ role: "user" as const, content: "hi" }];
    if (!stream) {
      const r = await sdk.chat.completions.create({ model: "p", messages });
      return r.choices[0]?.message.content ?? "";
    }
    let text = "";
    const s = await sdk.chat.completions.create({ model: "p", messages, stream: true });
    for await (const chunk of s) text += chunk.choices[0]?.delta.content ?? "";
    return text;
  },
  responses: async (endpoint, _root, secret, stream) => {
    const sdk = new OpenAI({ baseURL: endpoint, apiKey: secret, maxRetries: 0 });
    if (!stream) return (await sdk.responses.create({ model: "p", input: "hi" })).output_text;
    let text = "";
    const s = await sdk.responses.create({ model: "p", input: "hi", stream: true });
    for await (const e of s) if (e.type === "response.output_text.delta") text += e.delta;
    return text;
  },
  anthropic: async (_endpoint, root, secret, stream) => {
    const sdk = new Anthropic({ baseURL: root, apiKey: secret, maxRetries: 0 });
    const body = {
      model: "p",
      max_tokens: 64,
      messages: [{ role: "user" as const, content: "hi" }],
    };
    if (!stream) {
      const r = await sdk.messages.create(body);
      return r.content.map((b) => b.type === "text" ? b.text : "").join("");
    }
    let text = "";
    const s = await sdk.messages.create({ ...body, stream: true });
    for await (const e of s) {
      if (e.type === "content_block_delta" && e.delta.type === "text_delta") text += e.delta.text;
    }
    return text;
  },
};

const hooks = (over: Partial<SessionHooks>): SessionHooks => ({
  request: [],
  response: [],
  requestStops: [],
  responseStops: [],
  ...over,
});

const guard: SessionHooks["response"][number] = {
  name: "guard",
  fn: (r) =>
    String(r.message.content).includes("BLOCK")
      ? { ...r, message: { role: "assistant", content: "Blocked" } }
      : null,
};

describe("interception hooks in every dialect", () => {
  let server: InterceptionServer;
  const clients: Record<string, ProviderClient> = {};
  const upstream: Record<string, () => number> = {};
  const closers: (() => Promise<void>)[] = [];
  before(async () => {
    server = await startInterceptionServer();
    const chat = await startFakeOpenAI({ apiKey: KEY, script: () => REPLY });
    const responses = await startFakeResponses({ apiKey: KEY, script: () => REPLY });
    const anthropic = await startFakeAnthropic({ apiKey: KEY, script: () => ({ text: REPLY }) });
    for (const [name, fake] of Object.entries({ chat, responses, anthropic })) {
      clients[name] = createProviderClient({
        baseUrl: fake.url,
        apiKeyVar: "VF_HD_KEY",
        env: { VF_HD_KEY: KEY },
      });
      upstream[name] = () => fake.requests.length;
      closers.push(() => fake.close());
    }
  });
  after(async () => {
    await server.close();
    for (const c of Object.values(clients)) c.close();
    for (const close of closers) await close();
  });

  let traces = 0;
  async function run(dialect: string, stream: boolean, h: SessionHooks) {
    const trace: SessionTrace = {
      id: `hd${++traces}`,
      nodes: [],
      calls: [],
      tools: [],
      stop_condition: null,
      request_rewrites: [],
      response_rewrites: [],
    };
    const client = clients[dialect]!;
    const session = server.open({ trace, model: "m", sampling: {}, client, limits: {}, hooks: h });
    try {
      const text = await PROGRAMS[dialect]!(session.endpoint, server.url, session.secret, stream);
      return { text, error: null, trace };
    } catch (err) {
      return { text: null, error: err as { status?: number; message: string }, trace };
    } finally {
      session.close();
    }
  }

  for (const dialect of Object.keys(PROGRAMS)) {
    for (const stream of [false, true]) {
      const how = `${dialect}${stream ? ", streamed" : ""}`;
      it(`rewrites a response (${how})`, async () => {
        const { text, error, trace } = await run(dialect, stream, hooks({ response: [guard] }));
        assert.equal(error, null, error?.message);
        assert.equal(text, "Blocked");
        assert.deepEqual(trace.response_rewrites, [{ handler: "guard" }]);
        const sampled = trace.nodes.filter((n) => n.sampled);
        assert.equal(sampled.length, 1);
        assert.equal(sampled[0]!.message.content, "Blocked");
        assert.equal(trace.calls[0]?.finish_reason, "stop");
      });

      it(`passes an answer no hook changed on whole (${how})`, async () => {
        const noop = { name: "noop", fn: () => null };
        const { text, error, trace } = await run(dialect, stream, hooks({ response: [noop] }));
        assert.equal(error, null, error?.message);
        assert.equal(text, REPLY);
        assert.deepEqual(trace.response_rewrites, []);
        assert.equal(trace.nodes.filter((n) => n.sampled)[0]?.message.content, REPLY);
      });

      it(`stops the rollout on a response (${how})`, async () => {
        const stop = { name: "said_block", fn: () => true };
        const { text, error, trace } = await run(
          dialect,
          stream,
          hooks({ responseStops: [stop] }),
        );
        assert.equal(text, null);
        assert.equal(error?.status, 400);
        assert.match(error!.message, /rollout stopped: said_block/);
        assert.equal(trace.stop_condition, "said_block");
        assert.equal(trace.nodes.filter((n) => n.sampled)[0]?.message.content, REPLY);
        assert.deepEqual(trace.response_rewrites, []);
      });
    }

    it(`blocks a request: the prompt is recorded, nothing goes upstream (${dialect})`, async () => {
      const before = upstream[dialect]!();
      const stop = { name: "no_hi", fn: () => true };
      const { error, trace } = await run(dialect, false, hooks({ requestStops: [stop] }));
      assert.equal(error?.status, 400);
      assert.match(error!.message, /rollout stopped: no_hi/);
      assert.equal(upstream[dialect]!(), before);
      assert.equal(trace.stop_condition, "no_hi");
      assert.equal(trace.calls.length, 0);
      assert.deepEqual(trace.nodes.map((n) => [n.message.role, n.sampled]), [["user", false]]);
    });
  }

  it("sends a rewritten Anthropic request translated, the rewrite upstream and in the trace", async () => {
    const chatOnly = await startInterceptionServer({
      providerDialects: ALL_DIALECTS.filter((d) => d.id === "openai-chat"),
    });
    const fake = await startFakeOpenAI({ apiKey: KEY, script: () => "ok" });
    const client = createProviderClient({
      baseUrl: fake.url,
      apiKeyVar: "VF_HD_KEY",
      env: { VF_HD_KEY: KEY },
    });
    const trace: SessionTrace = {
      id: "hd-rw",
      nodes: [],
      calls: [],
      tools: [],
      stop_condition: null,
      request_rewrites: [],
    };
    const bye: SessionHooks["request"][number] = {
      name: "bye",
      fn: (r) => ({ ...r, messages: r.messages.map((m) => ({ ...m, content: "bye" })) }),
    };
    const session = chatOnly.open({
      trace,
      model: "m",
      sampling: {},
      client,
      limits: {},
      hooks: hooks({ request: [bye] }),
    });
    try {
      const text = await PROGRAMS.anthropic!(session.endpoint, chatOnly.url, session.secret, false);
      assert.equal(text, "ok");
      assert.deepEqual(fake.requests.at(-1)?.body.messages, [{ role: "user", content: "bye" }]);
      assert.deepEqual(trace.request_rewrites, [{ handler: "bye" }]);
      assert.equal(trace.nodes[0]?.message.content, "bye");
    } finally {
      session.close();
      await chatOnly.close();
      client.close();
      await fake.close();
    }
  });

  it("relays a held stream no hook changed whole, its terminal event included", async () => {
    const trace: SessionTrace = {
      id: "hd-raw",
      nodes: [],
      calls: [],
      tools: [],
      stop_condition: null,
    };
    const noop = { name: "noop", fn: () => null };
    const session = server.open({
      trace,
      model: "m",
      sampling: {},
      client: clients.chat!,
      limits: {},
      hooks: hooks({ response: [noop] }),
    });
    try {
      const res = await fetch(`${session.endpoint}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${session.secret}` },
        body: JSON.stringify({
          model: "p",
          messages: [{ role: "user", content: "hi" }],
          stream: true,
        }),
      });
      const body = await res.text();
      assert.equal(res.status, 200);
      assert.match(body, /"content":"BLOCK "/);
      assert.match(body, /data: \[DONE\]\s*$/);
    } finally {
      session.close();
    }
  });

  it("fails the call with a TaskError when a response hook breaks the rules", async () => {
    const bad: SessionHooks["response"][number] = {
      name: "bad",
      fn: (r) => ({
        ...r,
        message: {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c", name: "f", arguments: "{}" }],
        },
      }),
    };
    const trace: SessionTrace = {
      id: "hd-bad",
      nodes: [],
      calls: [],
      tools: [],
      stop_condition: null,
    };
    const session = server.open({
      trace,
      model: "m",
      sampling: {},
      client: clients.chat!,
      limits: {},
      hooks: hooks({ response: [bad] }),
    });
    await assert.rejects(PROGRAMS.chat!(session.endpoint, server.url, session.secret, false), {
      status: 502,
    });
    assert.match(session.hookError?.message ?? "", /inert text-only message/);
    assert.equal(session.hookError?.name, "TaskError");
    assert.equal(trace.calls[0]?.error?.type, "TaskError");
    session.close();
  });
});
