/**
 * The in-process transport: `wireFetch` delivers requests to a registered handler with no
 * socket and answers like `fetch`; the interception server reached that way records the
 * same trace as over HTTP; the oracle's in-process client answers what its HTTP server
 * answers; a stream whose chunks hold whole events is relayed byte for byte.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { WireHandler } from "../kit/wire/http.ts";
import { sendJson } from "../kit/wire/http.ts";
import { serveInProcess, wireFetch, wireFetchText } from "../kit/wire/in_process.ts";
import { SseSplitter } from "../kit/wire/sse.ts";
import { TURN_MS } from "../kit/util/loop_turn.ts";
import { runChatLoop } from "../kit/harness/chat_loop.ts";
import { addSecret, clearSecretsForTests } from "../kit/secrets.ts";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../lib/interception/mod.ts";
import { inProcessOracle, type OracleServer, startOracleServer } from "../lib/clients/oracle.ts";
import { createProviderClient, type ProviderClient } from "../lib/clients/provider_client.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";

const ORIGIN = "http://127.0.0.1:1";
/** Where nothing listens (port 9 is "discard"; nothing serves it here). */
const ORIGIN_NOBODY = "http://127.0.0.1:9";

describe("wireFetch", () => {
  const calls: string[] = [];
  let undo: () => void;
  before(() => {
    const handler: WireHandler = async (req, reply) => {
      calls.push(`${req.method} ${req.path}`);
      const body = new TextDecoder().decode((await req.body(1024)) ?? new Uint8Array());
      if (req.path === "/json") return sendJson(reply, 201, { got: body, h: req.headers["x-a"] });
      if (req.path === "/stream") {
        reply.head(200, { "content-type": "text/event-stream" });
        reply.write("data: 1\n\n");
        await new Promise((r) => setTimeout(r, 5));
        reply.write(new TextEncoder().encode("data: 2\n\n"));
        return reply.end("data: [DONE]\n\n");
      }
      if (req.path === "/cut") {
        reply.head(200, { "content-type": "text/event-stream" });
        reply.write("data: 1\n\n");
        return reply.destroy();
      }
      if (req.path === "/slow") return await new Promise(() => {});
      throw new Error("handler failed");
    };
    undo = serveInProcess(ORIGIN, handler);
  });
  after(() => undo());

  it("answers a JSON reply as a Response, with the request's body and headers", async () => {
    const res = await wireFetch(`${ORIGIN}/json?q=1`, {
      method: "post",
      headers: { "X-A": "b" },
      body: "hello",
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.deepEqual(await res.json(), { got: "hello", h: "b" });
    assert.equal(calls.at(-1), "POST /json");
  });

  it("streams what the handler writes, as it writes it", async () => {
    const res = await wireFetch(`${ORIGIN}/stream`);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(await res.text(), "data: 1\n\ndata: 2\n\ndata: [DONE]\n\n");
  });

  it("breaks the body of a reply cut off, and fails like fetch when the handler throws", async () => {
    const res = await wireFetch(`${ORIGIN}/cut`);
    await assert.rejects(res.text(), /terminated/);
    await assert.rejects(wireFetch(`${ORIGIN}/boom`), /handler failed/);
  });

  it("rejects with the signal's reason when aborted", async () => {
    const ctl = new AbortController();
    const pending = wireFetch(`${ORIGIN}/slow`, { signal: ctl.signal });
    ctl.abort(new DOMException("stop", "AbortError"));
    await assert.rejects(pending, { name: "AbortError" });
  });

  it("goes over the network for an origin nobody serves in-process", async () => {
    const server = http.createServer((_req, res) => res.end("from the socket"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    try {
      assert.equal(await (await wireFetch(url)).text(), "from the socket");
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
    const before = calls.length;
    undo();
    await assert.rejects(wireFetch(`${ORIGIN}/json`)); // nothing listens on port 1
    assert.equal(calls.length, before);
    undo = serveInProcess(ORIGIN, (_req, reply) => Promise.resolve(sendJson(reply, 200, {})));
  });
});

describe("wireFetchText", () => {
  const TEXT_ORIGIN = "http://127.0.0.1:2";
  const OFFERED = { a: 1, list: [{ b: "c" }] };
  let undo: () => void;
  before(() => {
    const handler: WireHandler = async (req, reply) => {
      const body = new TextDecoder().decode((await req.body(1024)) ?? new Uint8Array());
      if (req.path === "/json") {
        return sendJson(reply, 429, { got: body }, { "Retry-After": "2" });
      }
      if (req.path === "/parts") {
        reply.head(200, { "content-type": "text/plain" });
        reply.write("a");
        await new Promise((r) => setTimeout(r, 5));
        reply.write(new TextEncoder().encode("é"));
        return reply.end("z");
      }
      if (req.path === "/cut") {
        reply.write("a");
        return reply.destroy();
      }
      if (req.path === "/offered") {
        reply.offerParsed?.(OFFERED);
        return sendJson(reply, 200, JSON.stringify(OFFERED));
      }
      if (req.path === "/offered-then-written") {
        reply.offerParsed?.(OFFERED);
        reply.head(200, { "content-type": "application/json" });
        reply.write('{"a":');
        return reply.end("2}");
      }
      if (req.path === "/slow") return await new Promise(() => {});
      throw new Error("handler failed");
    };
    undo = serveInProcess(TEXT_ORIGIN, handler);
  });
  after(() => undo());

  it("answers what wireFetch answers, read whole: status, lower-case headers, text", async () => {
    for (const path of ["/json", "/parts"]) {
      const res = await wireFetch(`${TEXT_ORIGIN}${path}`, { method: "POST", body: "hi" });
      const whole = await wireFetchText(`${TEXT_ORIGIN}${path}`, { method: "POST", body: "hi" });
      const headers: Record<string, string> = {};
      res.headers.forEach((v, k) => (headers[k] = v));
      assert.deepEqual(whole, { status: res.status, headers, text: await res.text() });
    }
    const json = await wireFetchText(`${TEXT_ORIGIN}/json`, { method: "POST", body: "hi" });
    assert.deepEqual([json.status, json.headers["retry-after"], json.text], [
      429,
      "2",
      '{"got":"hi"}',
    ]);
    assert.equal((await wireFetchText(`${TEXT_ORIGIN}/parts`)).text, "aéz");
  });

  it("hands over the parsed body a handler offered, only when that body is all it sent", async () => {
    const offered = await wireFetchText(`${TEXT_ORIGIN}/offered`);
    assert.equal(offered.json, OFFERED, "the value itself: nothing parsed again");
    assert.deepEqual(JSON.parse(offered.text), OFFERED);
    const res = await wireFetch(`${TEXT_ORIGIN}/offered`);
    assert.equal(await res.text(), offered.text, "a Response carries the same text");
    const written = await wireFetchText(`${TEXT_ORIGIN}/offered-then-written`);
    assert.deepEqual([written.text, "json" in written], ['{"a":2}', false]);
    assert.equal("json" in await wireFetchText(`${TEXT_ORIGIN}/json`), false);
  });

  it("fails like fetch when the reply is cut off, the handler throws or the signal aborts", async () => {
    await assert.rejects(wireFetchText(`${TEXT_ORIGIN}/cut`), /terminated/);
    await assert.rejects(wireFetchText(`${TEXT_ORIGIN}/boom`), /handler failed/);
    const ctl = new AbortController();
    const pending = wireFetchText(`${TEXT_ORIGIN}/slow`, { signal: ctl.signal });
    ctl.abort(new DOMException("stop", "AbortError"));
    await assert.rejects(pending, { name: "AbortError" });
  });

  it("lets the event loop turn under a caller looping over calls answered at once", async () => {
    const { fired, calls } = await timerRunsDuring(() =>
      wireFetchText(`${TEXT_ORIGIN}/json`, { method: "POST", body: "hi" })
    );
    assert.ok(fired, `a timer set before the loop waited for all ${calls} calls`);
  });

  it("rejects a call whose signal aborted while it waited for the loop's turn", async () => {
    busyFor(TURN_MS + 5); // the loop has not turned for TURN_MS: the next call waits for a turn
    const ctl = new AbortController();
    const pending = wireFetchText(`${TEXT_ORIGIN}/json`, { method: "POST", signal: ctl.signal });
    ctl.abort(new DOMException("stop", "AbortError"));
    await assert.rejects(pending, { name: "AbortError" });
    const aborted = wireFetchText(`${TEXT_ORIGIN}/json`, { signal: ctl.signal });
    await assert.rejects(
      aborted,
      { name: "AbortError" },
      "an aborted signal rejects, as with fetch",
    );
  });

  it("goes over the network for an origin nobody serves in-process", async () => {
    const server = http.createServer((_req, res) => {
      res.setHeader("X-From", "socket");
      res.end("from the socket");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/x`;
    try {
      const res = await wireFetchText(url);
      assert.deepEqual([res.status, res.headers["x-from"], res.text], [
        200,
        "socket",
        "from the socket",
      ]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

describe("the interception server reached in-process", () => {
  let fake: FakeOpenAI;
  let client: ProviderClient;
  let server: InterceptionServer;
  before(async () => {
    fake = await startFakeOpenAI({
      script: (body) => {
        const last = body.messages.at(-1).content;
        if (typeof last === "string" && last.startsWith("echo ")) return last.slice(5);
        return body.messages.length < 3
          ? { tool_calls: [{ id: "call_echo", name: "echo", arguments: { text: "hi" } }] }
          : { content: "done " + "x".repeat(300), reasoning_content: "thought" };
      },
    });
    client = createProviderClient({ baseUrl: fake.url });
    server = await startInterceptionServer();
  });
  after(async () => {
    await server.close();
    client.close();
    await fake.close();
  });

  const newTrace = (id: string): SessionTrace => ({
    id,
    nodes: [],
    calls: [],
    tools: [],
    stop_condition: null,
  });

  /** The trace without its times. */
  const timeless = (trace: SessionTrace) =>
    JSON.parse(JSON.stringify(trace, (k, v) => (k === "time" || k === "timestamp" ? 0 : v)));

  it("records the same trace as over HTTP, JSON and streamed", async () => {
    const run = async (transport: typeof fetch, stream: boolean) => {
      const trace = newTrace("t");
      const session = server.open({ trace, model: "m", sampling: {}, client, limits: {} });
      const answer = await conversation(transport, session.endpoint, session.secret, stream);
      session.close();
      return { trace: timeless(trace), answer };
    };
    const requestsBefore = fake.requests.length;
    for (const stream of [false, true]) {
      const inProcess = await run(wireFetch as typeof fetch, stream);
      const overHttp = await run(fetch, stream);
      assert.deepEqual(inProcess, overHttp);
      assert.equal(inProcess.trace.calls.length, 2);
      assert.equal(inProcess.trace.nodes.length, 4);
      assert.match(inProcess.answer, /^done x+$/);
    }
    assert.equal(fake.requests.length - requestsBefore, 8);
  });

  it("hands a caller in this process the parsed answer, which the record does not share", async () => {
    const trace = newTrace("t-parsed");
    const session = server.open({ trace, model: "m", sampling: {}, client, limits: {} });
    const post = (messages: unknown[]) =>
      wireFetchText(`${session.endpoint}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${session.secret}` },
        body: JSON.stringify({ model: "program-model", messages }),
      });
    try {
      const first = await post([{ role: "user", content: "say hi" }]);
      assert.deepEqual(first.json, JSON.parse(first.text));
      const recorded = JSON.stringify(trace.nodes);
      // the caller owns what it was given: changing it leaves the record as it was
      const message = (first.json as { choices: { message: Record<string, unknown> }[] })
        .choices[0]!.message;
      (message.tool_calls as { id: string }[])[0]!.id = "changed";
      message.content = "changed";
      assert.equal(JSON.stringify(trace.nodes), recorded);

      // an answer that echoes a credential is scrubbed: only its text is handed over
      addSecret("sk-echoed-credential-1234");
      const echoed = await post([{ role: "user", content: "echo sk-echoed-credential-1234" }]);
      assert.equal(echoed.status, 200);
      assert.equal("json" in echoed, false);
      assert.doesNotMatch(echoed.text, /sk-echoed-credential-1234/);
    } finally {
      clearSecretsForTests();
      session.close();
    }
  });

  it("is what the host-side chat loop reaches: no socket needed", async () => {
    // The server's handler registered where nothing listens: only in-process works.
    const trace = newTrace("t-loop");
    const session = server.open({ trace, model: "m", sampling: {}, client, limits: {} });
    const origin = new URL(session.endpoint).origin;
    const unserve = serveInProcess(ORIGIN_NOBODY, server.handle);
    const result = await runChatLoop({
      endpoint: session.endpoint.replace(origin, ORIGIN_NOBODY),
      secret: session.secret,
      model: "program-model",
      messages: [{ role: "user", content: "say hi" }],
      tools: [{
        spec: {
          type: "function",
          function: { name: "echo", description: "Echo", parameters: { type: "object" } },
        },
        run: (args) => Promise.resolve(String(args.text)),
      }],
      signal: AbortSignal.timeout(30_000),
    }).finally(() => {
      unserve();
      session.close();
    });
    assert.equal(result.exitCode, 0, result.stderr);
    assert.match(result.stdout, /^done x+$/);
    assert.equal(trace.calls.length, 2);
  });
});

/** A two-turn conversation with a tool call, as a program would hold it, over `transport`. */
async function conversation(
  transport: typeof fetch,
  endpoint: string,
  secret: string,
  stream: boolean,
): Promise<string> {
  const post = async (messages: unknown[]) => {
    const res = await transport(`${endpoint}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
      body: JSON.stringify({
        model: "program-model",
        stream,
        messages,
        tools: [{
          type: "function",
          function: { name: "echo", parameters: { type: "object", properties: {} } },
        }],
      }),
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    if (text.startsWith("{")) return JSON.parse(text).choices[0].message;
    // a stream: the program reassembles it as an SDK would
    let content = "";
    const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
    const splitter = new SseSplitter();
    for (const e of [...splitter.push(text), ...splitter.end()]) {
      if (e.data === null || e.data === "[DONE]") continue;
      const delta = JSON.parse(e.data).choices[0]?.delta ?? {};
      content += delta.content ?? "";
      for (const tc of delta.tool_calls ?? []) {
        calls[tc.index] ??= { id: "", type: "function", function: { name: "", arguments: "" } };
        calls[tc.index]!.id ||= tc.id ?? "";
        calls[tc.index]!.function.name += tc.function?.name ?? "";
        calls[tc.index]!.function.arguments += tc.function?.arguments ?? "";
      }
    }
    return calls.length > 0 ? { content: null, tool_calls: calls } : { content };
  };
  const messages: unknown[] = [{ role: "user", content: "say hi" }];
  const first = await post(messages);
  const call = first.tool_calls[0];
  messages.push(
    { role: "assistant", content: first.content ?? null, tool_calls: first.tool_calls },
    { role: "tool", tool_call_id: call.id, content: JSON.parse(call.function.arguments).text },
  );
  const second = await post(messages);
  return String(second.content);
}

describe("the oracle reached in-process", () => {
  let server: OracleServer;
  const local = inProcessOracle();
  before(async () => {
    server = await startOracleServer();
  });
  after(() => server.close());

  it("answers what its HTTP server answers, JSON and streamed, errors too", async () => {
    const solution = { text: "the answer is 42", commands: ["ls", "pwd"] };
    server.register("s1", solution);
    local.register("s1", solution);
    const http = createProviderClient({ baseUrl: server.url });
    try {
      const bodies = [
        { model: "m", messages: [{ role: "user", content: "go" }] },
        {
          model: "m",
          messages: [{ role: "user", content: "go" }],
          tools: [{ type: "function", function: { name: "bash" } }],
          stream: true,
          stream_options: { include_usage: true },
        },
        { model: "m", messages: [] },
      ];
      for (const body of bodies) {
        const [a, b] = await Promise.all(
          [local.client, http].map(async (c) => {
            const res = await c.chatCompletions(body, { headers: { "x-session-id": "s1" } });
            const text = res.kind === "json" ? res.text : await readAll(res.body);
            return { status: res.status, kind: res.kind, text: text.replace(/"created":\d+/g, "") };
          }),
        );
        assert.deepEqual(a, b);
      }
      const unknown = await local.client.chatCompletions(bodies[0], {
        headers: { "x-session-id": "nobody" },
      });
      assert.equal(unknown.status, 400);
    } finally {
      http.close();
    }
  });

  it("lets the event loop turn under a caller looping over its answers", async () => {
    local.register("s2", { text: "7" });
    const body = { model: "m", messages: [{ role: "user", content: "go" }] };
    const { fired, calls } = await timerRunsDuring(() =>
      local.client.chatCompletions(body, { headers: { "x-session-id": "s2" } })
    );
    assert.ok(fired, `a timer set before the loop waited for all ${calls} calls`);
    busyFor(TURN_MS + 5); // the next call waits for a turn, during which its signal aborts
    const ctl = new AbortController();
    const pending = local.client.chatCompletions(body, {
      headers: { "x-session-id": "s2" },
      signal: ctl.signal,
    });
    ctl.abort(new DOMException("stop", "AbortError"));
    await assert.rejects(pending, { name: "AbortError" });
  });
});

/**
 * Calls `call` in a loop until a timer set before the loop runs (or 2 s pass): whether the
 * timer ran while the loop went on, and after how many calls.
 */
async function timerRunsDuring(
  call: () => Promise<unknown>,
): Promise<{ fired: boolean; calls: number }> {
  let fired = false;
  setTimeout(() => (fired = true), 0);
  const start = performance.now();
  let calls = 0;
  while (!fired && performance.now() - start < 2000) {
    await call();
    calls++;
  }
  return { fired, calls };
}

/** Keeps the thread busy for `ms` milliseconds. */
function busyFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) { /* busy */ }
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of body) text += decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}
