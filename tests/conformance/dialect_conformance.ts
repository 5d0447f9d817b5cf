/**
 * The shared conformance suite of the {@link Dialect} contract. A dialect module calls
 * {@link dialectConformance} with samples of its wire format written by hand in the test
 * (never produced by the dialect under test): a program's requests, a provider's JSON and
 * streamed answers and an error body, with what each means in the trace's terms. The suite
 * checks the dialect reads them, that what it renders reads back the same, and that the
 * interception server serving it records the calls as the trace expects — against a
 * loopback upstream that answers the samples as they are.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Message } from "../../kit/trace/types.ts";
import type { Dialect, DialectOutcome, DialectStreamReader } from "../../kit/wire/dialect.ts";
import { findRoute } from "../../kit/wire/dialect.ts";
import { SseSplitter } from "../../kit/wire/sse.ts";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../../lib/interception/mod.ts";
import { createProviderClient, type ProviderClient } from "../../lib/clients/provider_client.ts";

/** Hand-written samples of a dialect's wire format and what they mean. */
export interface DialectSamples {
  /** A program's non-streaming request body. */
  request: Record<string, unknown>;
  /** The same request asking for a stream. */
  streamRequest: Record<string, unknown>;
  /** The request's conversation as trace messages. */
  requestMessages: Message[];
  /** A provider's JSON answer (the body text). */
  response: string;
  /** The same answer streamed (the raw `text/event-stream` body). */
  stream: string;
  /** What both answers carry. */
  outcome: DialectOutcome;
  /** A provider's error body and the message it carries. */
  error: { text: string; message: string };
  /** A provider's message saying the prompt is too long. */
  contextLengthMessage: string;
  /** Bodies that are not requests of this dialect. */
  invalidRequests: unknown[];
}

/** Reads a raw SSE text event by event; returns the reader and the last verdict's kind. */
function readStream(reader: DialectStreamReader, text: string): string[] {
  const splitter = new SseSplitter();
  return [...splitter.push(text), ...splitter.end()].map((e) => reader.read(e).kind);
}

/** Runs the conformance suite for `dialect` with `samples`. */
export function dialectConformance(name: string, dialect: Dialect, samples: DialectSamples): void {
  const callRoute = dialect.routes.find((r) => r.answer === undefined);

  describe(`dialect conformance: ${name}`, () => {
    it("declares its routes: paths from the root, one of them a model call", () => {
      assert.ok(dialect.id.length > 0);
      assert.ok(dialect.endpoint.startsWith("/"), dialect.endpoint);
      for (const route of dialect.routes) {
        assert.ok(route.path.startsWith("/"), route.path);
        assert.ok(route.method === "GET" || route.method === "POST");
        assert.equal(findRoute(dialect, route.path.replace(/\/$/, "/x")), route);
      }
      assert.ok(callRoute, "no route without an answer (a model call)");
      assert.equal(dialect.refuse?.(callRoute.path) ?? null, null);
    });

    it("reads a request's conversation and whether it streams; refuses what is not one", () => {
      const plain = dialect.parseRequest(samples.request);
      assert.ok(typeof plain !== "string", String(plain));
      assert.deepEqual(plain.messages, samples.requestMessages);
      assert.equal(plain.stream, false);
      const streamed = dialect.parseRequest(samples.streamRequest);
      assert.ok(typeof streamed !== "string", String(streamed));
      assert.equal(streamed.stream, true);
      for (const bad of samples.invalidRequests) {
        const out = dialect.parseRequest(bad);
        assert.equal(typeof out, "string", `accepted ${JSON.stringify(bad)}`);
        assert.ok((out as string).length > 0);
      }
    });

    it("puts the run's model and sampling in the upstream body and records them", () => {
      const req = dialect.parseRequest(samples.streamRequest);
      assert.ok(typeof req !== "string");
      const call = dialect.prepare(req, "run-model", { temperature: 0.25, seed: null }, {
        streamUsage: true,
      });
      assert.equal(call.body.model, "run-model");
      assert.equal(call.body.temperature, 0.25);
      assert.equal(call.sampling.temperature, 0.25);
      assert.ok(!("seed" in call.body) || call.body.seed === samples.streamRequest.seed);
      assert.equal(call.stream, true);
      // the program's body is left as it was
      assert.notEqual(req.body.model, "run-model");
    });

    it("reads a provider's JSON answer; a body without one is null", () => {
      assert.deepEqual(dialect.parseResponse(JSON.parse(samples.response)), samples.outcome);
      assert.equal(dialect.parseResponse({}), null);
      assert.equal(dialect.parseResponse("text"), null);
    });

    it("reads a provider's stream event by event, ending on its terminal event", () => {
      const reader = dialect.streamReader(true);
      assert.equal(reader.answered, false);
      const kinds = readStream(reader, samples.stream);
      assert.equal(kinds.at(-1), "terminal");
      assert.ok(!kinds.includes("malformed") && !kinds.includes("error"), kinds.join());
      assert.equal(reader.answered, true);
      assert.deepEqual(reader.result(), samples.outcome);
    });

    it("says a stream is broken when an event is malformed", () => {
      const kinds = readStream(dialect.streamReader(true), "data: {not json\n\n");
      assert.deepEqual(kinds, ["malformed"]);
    });

    it("renders answers that read back the same, as JSON and as a stream", () => {
      const meta = { id: "conf-1", model: "m", created: 1_700_000_000, includeUsage: true };
      const json = JSON.parse(JSON.stringify(dialect.renderResponse(samples.outcome, meta)));
      assert.deepEqual(dialect.parseResponse(json), samples.outcome);
      const events = dialect.renderStream(samples.outcome, meta);
      for (const e of events) assert.ok(e.endsWith("\n\n"), JSON.stringify(e));
      const reader = dialect.streamReader(true);
      const kinds = readStream(reader, events.join(""));
      assert.equal(kinds.at(-1), "terminal");
      assert.deepEqual(reader.result(), samples.outcome);
    });

    it("writes and reads its error bodies; knows a context-length error", () => {
      const body = dialect.errorBody("boom happened", "invalid_request_error", "boom");
      assert.equal(dialect.errorMessage(JSON.stringify(body)), "boom happened");
      assert.equal(dialect.errorMessage(samples.error.text), samples.error.message);
      assert.equal(dialect.errorMessage("  plain text  "), "plain text");
      assert.equal(dialect.isContextLengthError(400, samples.contextLengthMessage), true);
      assert.equal(dialect.isContextLengthError(400, "invalid temperature"), false);
      assert.equal(dialect.isContextLengthError(500, samples.contextLengthMessage), false);
    });

    describe("served by the interception server", () => {
      let upstream: http.Server;
      let client: ProviderClient;
      let server: InterceptionServer;
      const seen: { path: string; session: string | undefined; body: unknown }[] = [];

      before(async () => {
        // A loopback provider answering the samples as they are; strict about the path.
        upstream = http.createServer((req, res) => {
          let text = "";
          req.setEncoding("utf8");
          req.on("data", (c: string) => (text += c));
          req.on("end", () => {
            const body = JSON.parse(text) as Record<string, unknown>;
            seen.push({
              path: req.url ?? "",
              session: req.headers["x-session-id"] as string,
              body,
            });
            if (req.method !== "POST" || req.url !== `/v1${dialect.endpoint}`) {
              res.writeHead(404, { "content-type": "application/json" });
              return res.end(samples.error.text);
            }
            if (body.stream === true) {
              res.writeHead(200, { "content-type": "text/event-stream" });
              return res.end(samples.stream);
            }
            res.writeHead(200, { "content-type": "application/json" });
            res.end(samples.response);
          });
        });
        await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
        const port = (upstream.address() as AddressInfo).port;
        client = createProviderClient({ baseUrl: `http://127.0.0.1:${port}/v1` });
        server = await startInterceptionServer({ dialects: [dialect] });
      });
      after(async () => {
        await server.close();
        client.close();
        await new Promise<void>((r) => upstream.close(() => r()));
      });

      const newTrace = (): SessionTrace => ({
        id: `conf${seen.length}`,
        nodes: [],
        calls: [],
        tools: [],
        stop_condition: null,
      });
      const post = (secret: string | null, path: string, body: unknown, method = "POST") =>
        fetch(`${server.url}${path}`, {
          method,
          headers: {
            "content-type": "application/json",
            ...(secret === null ? {} : { authorization: `Bearer ${secret}` }),
          },
          ...(method === "POST" ? { body: JSON.stringify(body) } : {}),
        });

      for (const streaming of [false, true]) {
        it(`records a ${streaming ? "streamed" : "JSON"} call: the graph, the call, the model`, async () => {
          const trace = newTrace();
          const session = server.open({
            trace,
            model: "run-model",
            sampling: {},
            client,
            limits: {},
          });
          const res = await post(
            session.secret,
            callRoute!.path,
            streaming ? samples.streamRequest : samples.request,
          );
          assert.equal(res.status, 200, await res.clone().text());
          await res.text();
          session.close();
          assert.equal(trace.calls.length, 1);
          const call = trace.calls[0]!;
          assert.equal(call.error, null);
          assert.equal(call.endpoint, dialect.endpoint);
          assert.equal(call.model, "run-model");
          assert.deepEqual(call.usage, samples.outcome.usage);
          assert.deepEqual(
            trace.nodes.map((n) => n.message),
            [...samples.requestMessages, samples.outcome.message],
          );
          assert.equal(trace.nodes.at(-1)!.sampled, true);
          assert.equal(call.node, trace.nodes.length - 1);
          const last = seen.at(-1)!;
          assert.equal(last.session, trace.id);
          assert.equal((last.body as { model?: unknown }).model, "run-model");
        });
      }

      it("refuses an unknown secret (401), a wrong method (405) and a closed session (409)", async () => {
        const unknown = await post("nope", callRoute!.path, samples.request);
        assert.equal(unknown.status, 401);
        assert.ok(dialect.errorMessage(await unknown.text()).length > 0);
        const wrong = await post(null, callRoute!.path, undefined, "GET");
        assert.equal(wrong.status, 405);
        await wrong.text();
        const session = server.open({
          trace: newTrace(),
          model: "m",
          sampling: {},
          client,
          limits: {},
        });
        session.close();
        const closed = await post(session.secret, callRoute!.path, samples.request);
        assert.equal(closed.status, 409);
        await closed.text();
      });

      it("answers its fixed routes for an open session", async () => {
        const session = server.open({
          trace: newTrace(),
          model: "run-model",
          sampling: {},
          client,
          limits: {},
        });
        for (const route of dialect.routes.filter((r) => r.answer)) {
          const path = route.path.endsWith("/") ? `${route.path}run-model` : route.path;
          const res = await post(session.secret, path, undefined, route.method);
          const expected = route.answer!(path, "run-model");
          assert.equal(res.status, expected.status, path);
          assert.deepEqual(await res.json(), JSON.parse(JSON.stringify(expected.body)));
        }
        session.close();
      });
    });
  });
}
