/**
 * Streams are relayed without re-encoding what the relay does not touch: an upstream chunk
 * holding whole events that all go to the program unchanged is written as the very bytes
 * that came; chunks with an event hidden, a secret scrubbed, CRLF line endings or a partial
 * event are written as (normalised) text, and the program's stream reads the same either way.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { addSecret, MASK } from "../kit/secrets.ts";
import type { WireReply, WireRequest } from "../kit/wire/http.ts";
import { sendJson } from "../kit/wire/http.ts";
import { SseSplitter } from "../kit/wire/sse.ts";
import { type SessionTrace, startInterceptionServer } from "../lib/interception/mod.ts";
import { inProcessClient } from "../lib/clients/in_process_client.ts";

const encode = (s: string) => new TextEncoder().encode(s);

describe("SseSplitter", () => {
  it("finds the same events however the stream is cut, CRLF and long events too", () => {
    const long = "x".repeat(5000);
    const text = `: hi\n\ndata: a\r\n\r\n\n\nevent: e\ndata: ${long}\ndata: b\n\ndata: [DONE]\n\n`;
    const events = (pieces: string[]) => {
      const s = new SseSplitter();
      return [...pieces.flatMap((p) => s.push(encode(p))), ...s.end()];
    };
    const whole = events([text]);
    assert.deepEqual(whole.map((e) => e.data), [null, "a", `${long}\nb`, "[DONE]"]);
    assert.equal(whole[2]!.event, "e");
    for (let cut = 1; cut < text.length; cut += cut < 40 ? 1 : 97) {
      assert.deepEqual(events([text.slice(0, cut), text.slice(cut)]), whole, `cut at ${cut}`);
    }
    const small: string[] = [];
    for (let i = 0; i < text.length; i += 7) small.push(text.slice(i, i + 7));
    assert.deepEqual(events(small), whole);
  });
});

describe("SseSplitter.verbatim", () => {
  it("is true only for input that is exactly whole events with LF line endings", () => {
    const s = new SseSplitter();
    s.push(encode("data: 1\n\ndata: 2\n\n"));
    assert.equal(s.verbatim, true);
    s.push(encode("data: 3\n\nda"));
    assert.equal(s.verbatim, false, "a partial event is held back");
    s.push(encode("ta: 4\n\n"));
    assert.equal(s.verbatim, false, "began inside an event");
    s.push(encode("data: 5\n\n"));
    assert.equal(s.verbatim, true);
    s.push(encode("data: 6\r\n\r\n"));
    assert.equal(s.verbatim, false, "CRLF is normalised");
    s.push(encode("\ndata: 7\n\n"));
    assert.equal(s.verbatim, false, "a blank line is dropped");
    const euro = encode("data: €\n\n");
    s.push(euro.subarray(0, 8));
    assert.equal(s.verbatim, false);
    s.push(euro.subarray(8));
    assert.equal(s.verbatim, false, "a character split across chunks");
    s.push(encode(": comment\n\ndata: é\n\n"));
    assert.equal(s.verbatim, true);
  });
});

const chunk = (fields: string) =>
  `data: {"id":"c1","object":"chat.completion.chunk",${fields}}\n\n`;
const delta = (content: string, finish = "null") =>
  chunk(`"choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":${finish}}]`);
const usage = chunk(`"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}`);

/** Relays `upstream` (chunk by chunk) to a program; returns what the relay wrote. */
async function relay(upstream: string[], programWantsUsage: boolean) {
  const client = inProcessClient("http://upstream.test/v1", async (req, reply) => {
    await req.body(1 << 20);
    if (req.path !== "/v1/chat/completions") return sendJson(reply, 404, {});
    reply.head(200, { "content-type": "text/event-stream" });
    for (const c of upstream) {
      reply.write(encode(c));
      await new Promise((r) => setTimeout(r, 1));
    }
    reply.end();
  });
  const server = await startInterceptionServer();
  const trace: SessionTrace = { id: "t1", nodes: [], calls: [], tools: [], stop_condition: null };
  const session = server.open({ trace, model: "m", sampling: {}, client, limits: {} });
  const writes: (string | Uint8Array)[] = [];
  let status = 0;
  const reply: WireReply = {
    get headersSent() {
      return status !== 0;
    },
    finished: false,
    head: (s) => void (status = s),
    write: (c) => void writes.push(c),
    end: (c) => void (c !== undefined && writes.push(c)),
    destroy: () => assert.fail("the stream was cut off"),
  };
  const body = encode(JSON.stringify({
    model: "p",
    messages: [{ role: "user", content: "hi" }],
    stream: true,
    ...(programWantsUsage ? { stream_options: { include_usage: true } } : {}),
  }));
  const req: WireRequest = {
    method: "POST",
    path: "/v1/chat/completions",
    headers: { authorization: `Bearer ${session.secret}` },
    body: () => Promise.resolve(body),
    discard: () => {},
  };
  await server.handle(req, reply);
  session.close();
  await server.close();
  assert.equal(status, 200);
  assert.equal(trace.calls.length, 1);
  const text = writes.map((w) => typeof w === "string" ? w : new TextDecoder().decode(w));
  return { writes, text: text.join(""), trace };
}

describe("the SSE relay", () => {
  it("writes chunks of whole events as the bytes that came", async () => {
    const upstream = [delta("he"), delta("ll") + delta("o", '"stop"'), usage, "data: [DONE]\n\n"];
    const { writes, text, trace } = await relay(upstream, true);
    assert.equal(text, upstream.join(""));
    assert.deepEqual(writes.map((w) => typeof w), ["object", "object", "object", "string"]);
    assert.equal(trace.nodes.at(-1)?.message.content, "hello");
  });

  it("re-encodes only the chunks it must: hidden usage, CRLF, partial events", async () => {
    const split = delta("ll");
    const upstream = [
      delta("he"),
      split.slice(0, 20),
      split.slice(20),
      delta("o", '"stop"').replaceAll("\n", "\r\n"),
      usage,
      "data: [DONE]\n\n",
    ];
    const { writes, text, trace } = await relay(upstream, false);
    const expected = delta("he") + split + delta("o", '"stop"') + "data: [DONE]\n\n";
    assert.equal(text, expected, "usage hidden, LF endings");
    assert.deepEqual(writes.map((w) => typeof w), ["object", "string", "string", "string"]);
    assert.equal(trace.nodes.at(-1)?.message.content, "hello");
  });

  it("scrubs a secret the provider echoes, whatever the chunk", async () => {
    const secret = "sk-relay-test-4c1f9a7e2b";
    addSecret(secret);
    const { writes, text } = await relay([delta(secret, '"stop"'), "data: [DONE]\n\n"], true);
    assert.ok(!text.includes(secret));
    assert.ok(text.includes(MASK));
    assert.equal(typeof writes[0], "string");
  });
});
