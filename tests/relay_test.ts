/**
 * The model relay on the local runtime (its live programs are subprocesses): several
 * exchanges at once over one session, JSON and server-sent events, a client that closes
 * its connection closing the server's, and a relay that is closed ending every
 * connection. The server is a plain loopback HTTP server: the relay carries bytes.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { openRelay, type SandboxRelay } from "../kit/relay/host.ts";
import { LocalRuntime } from "../plugins/runtimes/local/runtime.ts";

let url = "";
const closedEarly: string[] = [];
const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  if (req.url === "/v1/json") {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ echo: body }));
    });
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.on("close", () => {
    if (!res.writableFinished) closedEarly.push(req.url ?? "");
  });
  const slow = req.url === "/v1/slow";
  let i = 0;
  const timer = setInterval(() => {
    res.write(`data: ${i++}\n\n`);
    if (!slow && i === 20) {
      clearInterval(timer);
      res.end("data: [DONE]\n\n");
    }
  }, slow ? 50 : 1);
  res.on("close", () => clearInterval(timer));
});

const runtime = new LocalRuntime({ workdir_root: null, keep_workdir: false, env: {} }, "relay");
let relay: SandboxRelay;

before(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  await runtime.start();
  relay = await openRelay(runtime, url);
});

after(async () => {
  await relay?.close();
  await runtime.stop();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("the model relay", () => {
  it("points the endpoint at its own port, keeping the path", () => {
    assert.match(relay.endpoint, /^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    assert.notEqual(relay.endpoint, url);
  });

  it("carries JSON and SSE exchanges, 16 at once, over one session", async () => {
    const calls = Array.from({ length: 16 }, async (_, i) => {
      if (i % 2 === 0) {
        const r = await fetch(`${relay.endpoint}/json`, { method: "POST", body: `call ${i}` });
        return (await r.json() as { echo: string }).echo;
      }
      const r = await fetch(`${relay.endpoint}/sse`);
      return (await r.text()).split("\n\n").filter(Boolean).length;
    });
    const got = await Promise.all(calls);
    got.forEach((v, i) => assert.deepEqual(v, i % 2 === 0 ? `call ${i}` : 21));
    assert.ok(relay.channelBytes() > 0);
  });

  it("closes the server's connection when the client closes its own", async () => {
    const controller = new AbortController();
    const r = await fetch(`${relay.endpoint}/slow`, { signal: controller.signal });
    const reader = r.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.read().catch(() => {});
    for (let i = 0; i < 100 && !closedEarly.includes("/v1/slow"); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(closedEarly, ["/v1/slow"]);
  });

  it("ends every connection, and stops listening, when it is closed", async () => {
    const second = await openRelay(runtime, url);
    const r = await fetch(`${second.endpoint}/slow`);
    const reader = r.body!.getReader();
    await reader.read();
    const ended = second.close();
    await assert.rejects(async () => {
      for (;;) if ((await reader.read()).done) throw new Error("ended");
    });
    await ended;
    await second.ended;
    await assert.rejects(fetch(`${second.endpoint}/json`, { method: "POST", body: "x" }));
  });
});
