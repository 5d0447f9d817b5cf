import { after, describe, it } from "node:test";
import { Buffer } from "node:buffer";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { startCannedReplyServer } from "./_canned_reply_server.ts";
import {
  ConnectionPool,
  DEFAULT_IDLE_MS,
  type Http1Origin,
  idleMsFor,
} from "../lib/clients/http1/connection_pool.ts";
import { exchange, Http1RequestError, type Http1Response } from "../lib/clients/http1/exchange.ts";
import { requestBytes } from "../lib/clients/http1/request_bytes.ts";
import {
  Http1ParseError,
  type ResponseHead,
  ResponseParser,
} from "../lib/clients/http1/response_parser.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Feeds `wire` to a parser in pieces of `step` bytes; returns what it delivered. */
function parse(wire: string, step: number, close = false) {
  const heads: ResponseHead[] = [];
  let body = "";
  let ends = 0;
  const parser = new ResponseParser({
    head: (h) => heads.push(h),
    body: (b) => (body += decoder.decode(b, { stream: true })),
    end: () => ends++,
  });
  const bytes = encoder.encode(wire);
  for (let i = 0; i < bytes.length; i += step) parser.feed(bytes.slice(i, i + step));
  if (close) parser.closed();
  return { heads, body, ends, done: parser.done };
}

/** Every way of cutting `wire` in pieces of 1..8 bytes and whole gives the same result. */
function parseAllSplits(wire: string, close = false) {
  const whole = parse(wire, wire.length + 1, close);
  for (let step = 1; step <= 8; step++) assert.deepEqual(parse(wire, step, close), whole);
  return whole;
}

describe("ResponseParser", () => {
  it("reads a content-length body, however the bytes are cut", () => {
    const r = parseAllSplits(
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n" +
        'X-Two: a\r\nx-two: b\r\n\r\n{"a":"bc"}\n',
    );
    assert.equal(r.heads.length, 1);
    assert.equal(r.heads[0]!.status, 200);
    assert.deepEqual(r.heads[0]!.headers, {
      "content-type": "application/json",
      "content-length": "11",
      "x-two": "a, b",
    });
    assert.equal(r.heads[0]!.keepAlive, true);
    assert.equal(r.body, '{"a":"bc"}\n');
    assert.deepEqual([r.ends, r.done], [1, true]);
  });

  it("reads a chunked body with chunk extensions and trailer fields", () => {
    const r = parseAllSplits(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
        "5;name=x\r\nhello\r\n1A\r\n, a chunk of twenty-six.\r\n\r\n 3 \t;a=b\r\nabc\r\n" +
        "0\r\nx-trailer: 1\r\n\r\n",
    );
    assert.equal(r.body, "hello, a chunk of twenty-six.\r\nabc");
    assert.deepEqual([r.ends, r.done, r.heads[0]!.keepAlive], [1, true, true]);
  });

  it("skips interim responses and reads no body for 204 and 304", () => {
    const r = parseAllSplits(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n" +
        "HTTP/1.1 204 No Content\r\n\r\n",
    );
    assert.deepEqual(r.heads.map((h) => h.status), [204]);
    assert.deepEqual([r.body, r.ends], ["", 1]);
    assert.equal(parse("HTTP/1.1 304 Not Modified\r\ncontent-length: 9\r\n\r\n", 100).ends, 1);
  });

  it("reads a body without length until the connection closes, and never reuses it", () => {
    const r = parseAllSplits("HTTP/1.1 200 OK\r\n\r\nuntil the end", true);
    assert.deepEqual([r.body, r.ends, r.heads[0]!.keepAlive], ["until the end", 1, false]);
    const open = parse("HTTP/1.1 200 OK\r\n\r\npart", 100);
    assert.deepEqual([open.ends, open.done], [0, false]);
  });

  it("keeps a connection only for HTTP/1.1 without `connection: close`", () => {
    const head = (wire: string) => parse(wire, 100).heads[0]!.keepAlive;
    assert.equal(head("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), true);
    assert.equal(head("HTTP/1.1 200 OK\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n"), false);
    assert.equal(head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"), false);
  });

  it("refuses what would frame the body wrongly", () => {
    const bad = [
      "HTTP/2 200 OK\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",
      "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
      "HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
      "HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 3, 4\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: -3\r\n\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1 2\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0x5\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1000000000000\r\n",
      "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabX\r\n",
      "HTTP/1.1 101 Switching Protocols\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nab",
      `HTTP/1.1 200 OK\r\nx-big: ${"x".repeat(70_000)}`,
    ];
    for (const wire of bad) {
      assert.throws(() => parse(wire, 4096), Http1ParseError, JSON.stringify(wire.slice(0, 50)));
    }
    assert.deepEqual(
      parse("HTTP/1.1 200 OK\r\ncontent-length: 3, 3\r\n\r\nabc", 100).body,
      "abc",
      "a repeated equal length is one length",
    );
  });

  it("tells a connection closed before any response from one closed mid-response", () => {
    const closed = (wire: string) => {
      const parser = new ResponseParser({ head() {}, body() {}, end() {} });
      parser.feed(encoder.encode(wire));
      try {
        parser.closed();
        return "ended";
      } catch (err) {
        return (err as Error).message;
      }
    };
    assert.match(closed(""), /before any response/);
    assert.match(
      closed("HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab"),
      /before the response ended/,
    );
    assert.match(closed("HTTP/1.1 200 OK\r\ncontent-le"), /before the response ended/);
  });
});

describe("requestBytes", () => {
  it("writes the request line, host, fields and body, and refuses fields that would split it", () => {
    const url = new URL("http://127.0.0.1:8080/v1/chat/completions?x=1");
    const bytes = requestBytes(
      url,
      { "x-a": "é ok", Host: "evil", "Content-Length": "99" },
      encoder.encode("{}"),
    );
    assert.equal(
      Buffer.from(bytes).toString("latin1"), // header values go out as Latin-1, as Node's http sends them
      "POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\n" +
        "x-a: é ok\r\ncontent-length: 2\r\n\r\n{}",
    );
    assert.throws(() => requestBytes(url, { "x-a": "1\r\nx-b: 2" }, new Uint8Array()), /x-a/);
    assert.throws(() => requestBytes(url, { "bad name": "1" }, new Uint8Array()), /bad name/);
    assert.throws(() => requestBytes(url, { "x-a": "\u4e00" }, new Uint8Array()), /x-a/);
  });
});

describe("idleMsFor", () => {
  it("keeps an idle connection a second less than the server's keep-alive timeout", () => {
    assert.equal(idleMsFor({}), DEFAULT_IDLE_MS);
    assert.equal(idleMsFor({ "keep-alive": "timeout=5, max=100" }), 4000);
    assert.equal(idleMsFor({ "keep-alive": "timeout=1" }), 500);
    assert.equal(idleMsFor({ "keep-alive": "timeout=86400" }), 600_000);
  });
});

/** A server on 127.0.0.1 that counts the connections it accepted. */
async function serve(
  handler: http.RequestListener,
  options: { tls?: boolean } = {},
) {
  const fixtures = join(import.meta.dirname!, "fixtures", "tls");
  const server = options.tls
    ? https.createServer({
      key: readFileSync(join(fixtures, "localhost.key")),
      cert: readFileSync(join(fixtures, "localhost.crt")),
    }, handler)
    : http.createServer(handler);
  const sockets = new Set<Socket>();
  server.on(options.tls ? "secureConnection" : "connection", (s: Socket) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const origin: Http1Origin = options.tls
    ? { secure: true, hostname: "localhost", port }
    : { secure: false, hostname: "127.0.0.1", port };
  return {
    port,
    origin,
    sockets,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections?.();
      }),
  };
}

/** Runs `body` with a {@link serve}d server, closed after however `body` ends. */
async function withServer(
  handler: http.RequestListener,
  ...rest: [options: { tls?: boolean }, body: (server: Served) => Promise<void>] | [
    body: (server: Served) => Promise<void>,
  ]
): Promise<void> {
  const [options, body] = rest.length === 2 ? rest : [{}, rest[0]];
  const server = await serve(handler, options);
  try {
    await body(server);
  } finally {
    await server.close();
  }
}

/** A server started by {@link serve}. */
type Served = Awaited<ReturnType<typeof serve>>;

async function readAll(res: Http1Response): Promise<string> {
  let text = "";
  for await (const chunk of res.body) text += decoder.decode(chunk, { stream: true });
  return text;
}

function post(pool: ConnectionPool, origin: Http1Origin, body: string, fresh = false) {
  const host = origin.secure ? `localhost:${origin.port}` : `127.0.0.1:${origin.port}`;
  const url = new URL(`${origin.secure ? "https" : "http"}://${host}/echo`);
  return exchange(pool, origin, requestBytes(url, { "x-test": "1" }, encoder.encode(body)), fresh);
}

describe("exchange over a connection pool", () => {
  const pools: ConnectionPool[] = [];
  const newPool = (connectTimeoutMs = 2000, ca?: string) => {
    const pool = new ConnectionPool(connectTimeoutMs, ca === undefined ? {} : { ca });
    pools.push(pool);
    return pool;
  };
  after(() => pools.forEach((p) => p.close()));

  const echo: http.RequestListener = (req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (body += c));
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/plain", "x-host": req.headers.host ?? "" });
      res.end(`${req.method} ${req.url} ${body}`);
    });
  };

  it("sends requests one after another on one kept-alive connection", async () => {
    await withServer(echo, async (server) => {
      const pool = newPool();
      const { origin } = server;
      const reused: boolean[] = [];
      for (const word of ["one", "two", "three"]) {
        const ex = post(pool, origin, word);
        const res = await ex.response;
        reused.push(ex.reused);
        assert.equal(await readAll(res), `POST /echo ${word}`);
        assert.equal(res.headers["x-host"], `127.0.0.1:${server.port}`);
        assert.equal(res.complete, true);
      }
      assert.deepEqual(reused, [false, true, true]);
      assert.equal(server.sockets.size, 1);
      const fresh = post(pool, origin, "four", true);
      assert.equal(await readAll(await fresh.response), "POST /echo four");
      assert.deepEqual([fresh.reused, server.sockets.size], [false, 2]);
    });
  });

  it("sends nothing of a request destroyed in the turn it was made", async () => {
    const received: string[] = [];
    await withServer((req, res) => {
      let body = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (body += c));
      req.on("end", () => void received.push(body));
      echo(req, res);
    }, async (server) => {
      const pool = newPool();
      const { origin } = server;
      assert.equal(await readAll(await post(pool, origin, "warm").response), "POST /echo warm");
      const dropped = post(pool, origin, "dropped"); // on the kept-alive connection
      const others = [post(pool, origin, "a"), post(pool, origin, "b")]; // on new ones
      assert.equal(dropped.reused, true);
      dropped.destroy(new Error("called off"));
      await assert.rejects(dropped.response, /called off/);
      const texts = await Promise.all(others.map(async (ex) => readAll(await ex.response)));
      assert.deepEqual(texts, ["POST /echo a", "POST /echo b"]);
      await new Promise((r) => setTimeout(r, 50)); // a request written would have arrived
      assert.deepEqual(received.sort(), ["a", "b", "warm"]);
    });
  });

  it("drops an idle connection the server closed and opens a new one", async () => {
    await withServer((req, res) => {
      res.on("finish", () => setTimeout(() => req.socket.destroy(), 50)); // its idle timeout
      echo(req, res);
    }, async (server) => {
      const pool = newPool();
      const { origin } = server;
      assert.equal(await readAll(await post(pool, origin, "a").response), "POST /echo a");
      await new Promise((r) => setTimeout(r, 400));
      const ex = post(pool, origin, "b");
      assert.equal(await readAll(await ex.response), "POST /echo b");
      assert.deepEqual([ex.reused, server.sockets.size], [false, 2]);
    });
  });

  it("closes an idle connection once the server's keep-alive time (less a second) is over", async () => {
    await withServer((req, res) => {
      res.setHeader("keep-alive", "timeout=1"); // kept 500 ms by the client
      echo(req, res);
    }, async (server) => {
      const closed: boolean[] = [];
      const pool = newPool();
      const { origin } = server;
      await readAll(await post(pool, origin, "a").response);
      const [first] = server.sockets;
      first!.on("close", () => closed.push(true));
      const soon = post(pool, origin, "b");
      await readAll(await soon.response);
      assert.equal(soon.reused, true, "within its idle time the connection is reused");
      await new Promise((r) => setTimeout(r, 1800)); // past 500 ms, and a sweep (1 s) later
      assert.deepEqual(closed, [true], "the client closed the idle connection");
      const late = post(pool, origin, "c");
      assert.equal(await readAll(await late.response), "POST /echo c");
      assert.deepEqual([late.reused, server.sockets.size], [false, 2]);
    });
  });

  it("never reuses a connection that carried bytes past the end of a response", async () => {
    const server = await startCannedReplyServer(
      "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokJUNK",
    );
    const origin = { secure: false, hostname: "127.0.0.1", port: server.port };
    const pool = newPool();
    try {
      assert.equal(await readAll(await post(pool, origin, "a").response), "ok");
      const next = post(pool, origin, "b");
      assert.equal(await readAll(await next.response), "ok");
      assert.deepEqual([next.reused, server.connections.length], [false, 2]);
    } finally {
      await server.close();
    }
  });

  it("reports a connection dropped before any response as such, with whether it was reused", async () => {
    let served = 0;
    await withServer((req, res) => {
      if (served++ > 0) return void req.socket.destroy();
      echo(req, res);
    }, async (server) => {
      const pool = newPool();
      const { origin } = server;
      await readAll(await post(pool, origin, "a").response);
      await assert.rejects(post(pool, origin, "b").response, (err: unknown) => {
        assert.ok(err instanceof Http1RequestError);
        assert.deepEqual([err.reused, err.responseStarted, err.connectTimedOut], [
          true,
          false,
          false,
        ]);
        return true;
      });
      await assert.rejects(post(pool, origin, "c").response, (err: unknown) => {
        assert.ok(err instanceof Http1RequestError);
        assert.equal(err.reused, false);
        return true;
      });
    });
  });

  it("fails a body that breaks off, and a refused connection with its system code", async () => {
    const server = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { "content-length": "100" });
      res.write("only part");
      setTimeout(() => req.socket.destroy(), 20);
    });
    const pool = newPool();
    const { origin } = server;
    try {
      const res = await post(pool, origin, "x").response;
      await assert.rejects(readAll(res), /closed before the response ended|ECONNRESET/);
      assert.equal(res.complete, false);
    } finally {
      await server.close();
    }
    await assert.rejects(post(pool, origin, "x").response, (err: unknown) => {
      assert.ok(err instanceof Http1RequestError);
      assert.equal(err.code, "ECONNREFUSED");
      return true;
    });
  });

  it("stops reading while its reader lags, so the server feels the backpressure", async () => {
    let ended = false;
    const chunk = "x".repeat(64 * 1024);
    const total = 512; // 32 MiB: more than the queue's 1 MiB and the kernel's socket buffers
    await withServer((req, res) => {
      req.resume();
      res.writeHead(200, { "content-type": "application/octet-stream" });
      let sent = 0;
      const pump = () => {
        while (sent < total) {
          sent++;
          if (!res.write(chunk)) return void res.once("drain", pump);
        }
        res.end(() => (ended = true));
      };
      pump();
    }, async (server) => {
      const pool = newPool();
      const { origin } = server;
      const res = await post(pool, origin, "big").response;
      await new Promise((r) => setTimeout(r, 500)); // nobody reads: the server must be held up
      assert.equal(ended, false, "the server wrote everything: nothing paused the socket");
      let size = 0;
      for await (const piece of res.body) size += piece.byteLength;
      assert.equal(size, chunk.length * total);
      assert.equal(res.complete, true);
    });
  });

  it("speaks TLS with the host name for SNI and certificate checks", async () => {
    await withServer(echo, { tls: true }, async (server) => {
      const ca = readFileSync(
        join(import.meta.dirname!, "fixtures", "tls", "localhost.crt"),
        "utf8",
      );
      const { origin } = server;
      const pool = newPool(2000, ca);
      const first = post(pool, origin, "secret");
      assert.equal(await readAll(await first.response), "POST /echo secret");
      const second = post(pool, origin, "again");
      assert.equal(await readAll(await second.response), "POST /echo again");
      assert.equal(second.reused, true);
      // the system's trust store does not know this certificate
      await assert.rejects(post(newPool(), origin, "x").response, Http1RequestError);
    });
  });
});
