import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { ProviderError } from "../kit/errors.ts";
import {
  createProviderClient,
  DEFAULT_STALL_TIMEOUT_S,
  joinUrl,
  MAX_RESPONSE_BYTES,
} from "../lib/clients/provider_client.ts";
import process from "node:process";
import type { ProviderResponse } from "../lib/clients/provider_client.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";
import { at } from "./_assert.ts";
import { startCannedReplyServer } from "./_canned_reply_server.ts";

const KEY = "sk-test-4f1c9e0b7a";

async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

async function text(response: ProviderResponse): Promise<string> {
  if (response.kind === "json") return response.text;
  const decoder = new TextDecoder();
  let out = "";
  for await (const chunk of response.body) out += decoder.decode(chunk, { stream: true });
  return out;
}

/** A one-route raw server for responses the fake would never send. */
async function rawServer(
  handler: http.RequestListener,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections?.();
      }),
  };
}

const chatBody = { model: "m", messages: [{ role: "user", content: "hello there" }] };

describe("joinUrl()", () => {
  it("joins without doubling the version segment or slashes", () => {
    assert.equal(joinUrl("http://h/v1", "/chat/completions"), "http://h/v1/chat/completions");
    assert.equal(joinUrl("http://h/v1/", "/chat/completions"), "http://h/v1/chat/completions");
    assert.equal(joinUrl("http://h/api/v1", "/v1/messages"), "http://h/api/v1/messages");
    assert.equal(joinUrl("http://h", "/v1/messages"), "http://h/v1/messages");
    assert.equal(
      joinUrl("http://h/v1beta", "chat/completions"),
      "http://h/v1beta/chat/completions",
    );
  });
});

describe("createProviderClient()", () => {
  let fake: FakeOpenAI;
  before(async () => {
    fake = await startFakeOpenAI({ apiKey: KEY });
  });
  after(async () => {
    await fake.close();
  });

  it("sends bearer auth from the named variable and the extra headers", async () => {
    const client = createProviderClient({
      baseUrl: fake.url,
      apiKeyVar: "TEST_PROVIDER_KEY",
      headers: { "X-Extra": "yes" },
      env: { TEST_PROVIDER_KEY: KEY },
    });
    try {
      const before = fake.requests.length;
      const res = await client.chatCompletions(chatBody, { headers: { "x-session-id": "abc" } });
      assert.equal(res.kind, "json");
      assert.equal(res.status, 200);
      if (res.kind !== "json") return;
      const json = res.json as { choices: { message: { content: string } }[] };
      assert.equal(at(json.choices, 0).message.content, "hello there");
      const seen = at(fake.requests, before);
      assert.equal(seen.headers["authorization"], `Bearer ${KEY}`);
      assert.equal(seen.headers["x-extra"], "yes");
      assert.equal(seen.headers["x-session-id"], "abc");
      assert.deepEqual(seen.body, chatBody);
    } finally {
      client.close();
    }
  });

  it("uses the key EMPTY when the variable is unset, and returns HTTP errors instead of throwing", async () => {
    const client = createProviderClient({
      baseUrl: fake.url,
      apiKeyVar: "TEST_PROVIDER_KEY",
      env: {},
    });
    try {
      const res = await client.chatCompletions(chatBody);
      assert.equal(res.status, 401);
      assert.equal(res.kind, "json");
      if (res.kind !== "json") return;
      assert.match(JSON.stringify(res.json), /Incorrect API key/);
    } finally {
      client.close();
    }
    const plain = await startFakeOpenAI();
    const noVar = createProviderClient({ baseUrl: plain.url });
    try {
      await noVar.chatCompletions(chatBody);
      assert.equal(at(plain.requests, 0).headers["authorization"], "Bearer EMPTY");
    } finally {
      noVar.close();
      await plain.close();
    }
  });

  it("returns a byte stream for stream: true", async () => {
    const client = createProviderClient({ baseUrl: fake.url, apiKeyVar: "K", env: { K: KEY } });
    try {
      const res = await client.chatCompletions({ ...chatBody, stream: true });
      assert.equal(res.kind, "stream");
      assert.equal(res.status, 200);
      assert.match(res.headers["content-type"] ?? "", /text\/event-stream/);
      const body = await text(res);
      assert.match(body, /"content":"hello "/);
      assert.ok(body.trimEnd().endsWith("data: [DONE]"));
    } finally {
      client.close();
    }
  });

  it("fails fast with ProviderError 503 on a closed port, without the key in the message", async () => {
    const port = await closedPort();
    const client = createProviderClient({
      baseUrl: `http://127.0.0.1:${port}/v1`,
      apiKeyVar: "K",
      env: { K: KEY },
    });
    try {
      await assert.rejects(client.chatCompletions(chatBody), (err: unknown) => {
        assert.ok(err instanceof ProviderError);
        assert.equal(err.statusCode, 503);
        assert.match(err.message, /could not reach/);
        assert.ok(!err.message.includes(KEY));
        assert.ok(!String(err.stack).includes(KEY));
        return true;
      });
    } finally {
      client.close();
    }
  });

  it("throws ProviderError 502 for malformed JSON on a 2xx and returns non-JSON error bodies", async () => {
    const raw = await rawServer((req, res) => {
      req.resume();
      if (req.url?.endsWith("/bad")) {
        res.writeHead(200, { "content-type": "application/json" });
        res.end("{not json");
      } else {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("upstream exploded");
      }
    });
    const client = createProviderClient({ baseUrl: raw.url });
    try {
      await assert.rejects(client.send({ path: "/bad", body: chatBody }), (err: unknown) => {
        assert.ok(err instanceof ProviderError);
        assert.equal(err.statusCode, 502);
        return true;
      });
      const res = await client.send({ path: "/other", body: chatBody });
      assert.equal(res.status, 500);
      assert.equal(res.kind, "json");
      if (res.kind === "json") {
        assert.equal(res.text, "upstream exploded");
        assert.equal(res.json, null);
      }
    } finally {
      client.close();
      await raw.close();
    }
  });

  it("does not cut a response whose headers come after the connect timeout", async () => {
    // The connect timer only covers opening the connection; a slow generation must pass.
    const slow = await startFakeOpenAI({ latencyMs: 600 });
    const client = createProviderClient({ baseUrl: slow.url, connectTimeoutMs: 150 });
    try {
      const res = await client.chatCompletions(chatBody);
      assert.equal(res.status, 200);
    } finally {
      client.close();
      await slow.close();
    }
  });

  it("fails a call after client.stall_timeout of silence; a chunk restarts it; null waits", async () => {
    // chunks 300 ms apart, the whole reply taking 1.5 s: silence never reaches 1 s
    const trickle = await rawServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      const body = JSON.stringify({ choices: [{ message: { role: "assistant", content: "x" } }] });
      let i = 0;
      const timer = setInterval(() => {
        if (i++ < 4) return void res.write(" ".repeat(8));
        clearInterval(timer);
        res.end(body);
      }, 300);
    });
    const silent = await rawServer((req) => req.resume()); // never answers
    const kept = createProviderClient({ baseUrl: trickle.url, stallTimeoutMs: 1000 });
    const forever = createProviderClient({ baseUrl: trickle.url, stallTimeoutMs: null });
    const stalled = createProviderClient({ baseUrl: silent.url, stallTimeoutMs: 200 });
    try {
      assert.equal((await kept.chatCompletions(chatBody)).status, 200);
      assert.equal((await forever.chatCompletions(chatBody)).status, 200);
      await assert.rejects(
        stalled.chatCompletions(chatBody),
        (err: unknown) =>
          err instanceof ProviderError && err.statusCode === 504 &&
          err.message.includes("client.stall_timeout"),
      );
    } finally {
      for (const c of [kept, forever, stalled]) c.close();
      await trickle.close();
      await silent.close();
    }
  });

  it("does not call a reply stalled when it arrived while this process was busy", async () => {
    // The reply is written at once, then this process is kept busy past the stall timeout:
    // when it runs again the bytes are waiting. Silence counts only while the process could
    // have read them.
    const busy = await rawServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}');
      const until = Date.now() + 600;
      while (Date.now() < until) { /* the process is busy */ }
    });
    const client = createProviderClient({ baseUrl: busy.url, stallTimeoutMs: 200 });
    try {
      assert.equal((await client.chatCompletions(chatBody)).status, 200);
    } finally {
      client.close();
      await busy.close();
    }
  });

  it("cuts off a reply past maxResponseBytes (64 MiB by default) with ProviderError 502", async () => {
    const huge = await rawServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ choices: [], pad: "x".repeat(3 * 1024 * 1024) }));
    });
    const capped = createProviderClient({ baseUrl: huge.url, maxResponseBytes: 1024 * 1024 });
    const roomy = createProviderClient({ baseUrl: huge.url });
    try {
      await assert.rejects(
        capped.chatCompletions(chatBody),
        (err: unknown) =>
          err instanceof ProviderError && err.statusCode === 502 &&
          err.message.includes("larger than 1048576 bytes"),
      );
      assert.equal((await roomy.chatCompletions(chatBody)).status, 200);
      assert.equal(MAX_RESPONSE_BYTES, 64 * 1024 * 1024);
    } finally {
      capped.close();
      roomy.close();
      await huge.close();
    }
  });

  it("cuts off a short reply past maxResponseBytes, whole in the read that brought its head", async () => {
    const small = await rawServer((req, res) => {
      req.resume();
      const body = JSON.stringify({ choices: [], pad: "x".repeat(2000) });
      res.writeHead(200, { "content-type": "application/json", "content-length": body.length });
      res.end(body);
    });
    const capped = createProviderClient({ baseUrl: small.url, maxResponseBytes: 1000 });
    const roomy = createProviderClient({ baseUrl: small.url, maxResponseBytes: 4000 });
    try {
      await assert.rejects(
        capped.chatCompletions(chatBody),
        (err: unknown) =>
          err instanceof ProviderError && err.statusCode === 502 &&
          err.message.includes("larger than 1000 bytes"),
      );
      const ok = await roomy.chatCompletions(chatBody);
      assert.equal(ok.kind === "json" && (ok.json as { pad: string }).pad.length, 2000);
    } finally {
      capped.close();
      roomy.close();
      await small.close();
    }
  });

  it("has a default stall timeout of 600 s (client.stall_timeout)", async () => {
    const { loadEvalConfig } = await import("../lib/config/load_config.ts");
    const loaded = await loadEvalConfig(["echo", "-m", "m", "--display", "none"], {
      cwd: process.cwd(),
    });
    assert.equal(loaded.config.client.stall_timeout, DEFAULT_STALL_TIMEOUT_S);
    assert.equal(DEFAULT_STALL_TIMEOUT_S, 600);
  });

  it("aborts on the signal, before and during the request", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    let received: () => void = () => {};
    const arrived = new Promise<void>((r) => (received = r));
    const held = await startFakeOpenAI({
      script: async () => {
        received();
        await gate;
        return "late";
      },
    });
    const client = createProviderClient({ baseUrl: held.url });
    try {
      const pre = new AbortController();
      pre.abort();
      await assert.rejects(client.chatCompletions(chatBody, { signal: pre.signal }), {
        name: "AbortError",
      });
      const ctl = new AbortController();
      const pending = client.chatCompletions(chatBody, { signal: ctl.signal });
      await arrived;
      ctl.abort();
      await assert.rejects(pending, { name: "AbortError" });
    } finally {
      release();
      client.close();
      await held.close();
    }
  });

  it("sends a call again on a new connection when a pooled keep-alive one was closed under it", async () => {
    // A provider that drops a request arriving on a connection that already served one (as
    // when its idle timeout closes a kept-alive connection just as the next call reuses it)
    // or, with `dropAfterFirst`, every request after the first.
    const provider = async (dropAfterFirst: boolean) => {
      const served = new WeakSet<object>();
      const seen = { requests: 0, resets: 0 };
      const raw = await rawServer((req, res) => {
        seen.requests++;
        if (served.has(req.socket) || (dropAfterFirst && seen.requests > 1)) {
          seen.resets++;
          return void req.socket.destroy();
        }
        served.add(req.socket);
        req.resume();
        res.writeHead(200, { "content-type": "application/json" });
        res.end('{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"}}]}');
      });
      const client = createProviderClient({
        baseUrl: raw.url,
        apiKeyVar: "VF_REUSE_KEY",
        env: { VF_REUSE_KEY: KEY },
      });
      return { raw, client, seen };
    };
    const healthy = await provider(false);
    const dropping = await provider(true);
    try {
      const { client, seen } = healthy;
      assert.equal((await client.chatCompletions(chatBody)).status, 200);
      assert.equal((await client.chatCompletions(chatBody)).status, 200);
      assert.deepEqual(seen, { requests: 3, resets: 1 }, "pooled connection, then a new one");

      // dropped on the new connection too: one retry, then the provider's error
      assert.equal((await dropping.client.chatCompletions(chatBody)).status, 200);
      await assert.rejects(dropping.client.chatCompletions(chatBody), (err: unknown) => {
        assert.ok(err instanceof ProviderError);
        assert.equal(err.statusCode, 503);
        assert.match(
          err.message,
          /^could not reach http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions: /,
        );
        assert.ok(!err.message.includes(KEY));
        return true;
      });
      assert.deepEqual(dropping.seen, { requests: 3, resets: 2 }, "one retry, no more");
    } finally {
      for (const { raw, client } of [healthy, dropping]) {
        client.close();
        await raw.close();
      }
    }
  });

  it("fails a call whose reply is not HTTP/1.1 with ProviderError 503, without the key", async () => {
    const server = await startCannedReplyServer("SMTP ready\r\n\r\n");
    const client = createProviderClient({
      baseUrl: `http://127.0.0.1:${server.port}/v1`,
      apiKeyVar: "VF_GARBLED_KEY",
      env: { VF_GARBLED_KEY: KEY },
    });
    try {
      await assert.rejects(client.chatCompletions(chatBody), (err: unknown) => {
        assert.ok(err instanceof ProviderError);
        assert.equal(err.statusCode, 503);
        assert.match(err.message, /^could not reach .*malformed HTTP response: bad status line/);
        assert.ok(!err.message.includes(KEY));
        return true;
      });
    } finally {
      client.close();
      await server.close();
    }
  });

  it("reads a response body that arrives in pieces", async () => {
    const raw = await rawServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"choices":[{"index":0,');
      setImmediate(() => res.end('"message":{"role":"assistant","content":"ok"}}]}'));
    });
    const client = createProviderClient({ baseUrl: raw.url });
    try {
      const res = await client.chatCompletions(chatBody);
      assert.equal(res.kind, "json");
      if (res.kind === "json") {
        assert.equal((res.json as { choices: unknown[] }).choices.length, 1);
      }
    } finally {
      client.close();
      await raw.close();
    }
  });
});
