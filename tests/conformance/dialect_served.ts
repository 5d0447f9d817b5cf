/**
 * The part of the dialect conformance suite that serves the dialect: the interception
 * server recording its calls against a loopback upstream answering the samples as they
 * are, and the oracle answering in the dialect.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type {
  Dialect,
  DialectOutcome,
  DialectRoute,
  DialectStreamReader,
} from "../../kit/wire/dialect.ts";
import { SseSplitter } from "../../kit/wire/sse.ts";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../../lib/interception/mod.ts";
import {
  createProviderClient,
  joinUrl,
  type ProviderClient,
} from "../../lib/clients/provider_client.ts";
import { inProcessOracle } from "../../lib/clients/oracle.ts";
import type { DialectSamples } from "./dialect_conformance.ts";

/** Reads a raw SSE text event by event; returns each verdict's kind. */
export function readStream(reader: DialectStreamReader, text: string): string[] {
  const splitter = new SseSplitter();
  return [...splitter.push(text), ...splitter.end()].map((e) => reader.read(e).kind);
}

/** The cases that serve `dialect` (its model-call route `callRoute`). */
export function servedConformance(
  dialect: Dialect,
  samples: DialectSamples,
  callRoute: DialectRoute,
): void {
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
          const relayed = dialect.routes.find((r) =>
            r.relay && req.url === new URL(joinUrl("http://h/v1", r.path)).pathname
          );
          if (req.method === "POST" && relayed) {
            res.writeHead(200, { "content-type": "application/json" });
            return res.end(JSON.stringify({ relayed: relayed.path, model: body.model }));
          }
          if (
            req.method !== "POST" ||
            req.url !== new URL(joinUrl("http://h/v1", dialect.endpoint)).pathname
          ) {
            res.writeHead(404, { "content-type": "application/json" });
            return res.end(samples.error.text);
          }
          if (req.headers["x-conformance-fail"] === "1") {
            res.writeHead(400, { "content-type": "application/json" });
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
    const post = (
      secret: string | null,
      path: string,
      body: unknown,
      method = "POST",
      headers: Record<string, string> = {},
    ) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: {
          "content-type": "application/json",
          ...(secret === null ? {} : { authorization: `Bearer ${secret}` }),
          ...headers,
        },
        ...(method === "POST" ? { body: JSON.stringify(body) } : {}),
      });
    const openSession = (limits: Record<string, number> = {}) => {
      const trace = newTrace();
      return {
        trace,
        session: server.open({ trace, model: "run-model", sampling: {}, client, limits }),
      };
    };

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
          callRoute.path,
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
        assert.deepEqual(trace.tools, samples.tools);
        assert.equal(
          call.finish_reason,
          (dialect.finishReason ?? traceFinishReason)(samples.outcome.finishReason),
        );
        assert.ok(
          call.finish_reason !== null,
          "the sample's finish reason is one the trace keeps",
        );
        const last = seen.at(-1)!;
        assert.equal(last.session, trace.id);
        assert.equal((last.body as { model?: unknown }).model, "run-model");
      });
    }

    it("takes the rollout's key as x-api-key as well as a bearer token", async () => {
      const { trace, session } = openSession();
      const res = await post(null, callRoute.path, samples.request, "POST", {
        "x-api-key": session.secret,
      });
      assert.equal(res.status, 200, await res.clone().text());
      await res.text();
      session.close();
      assert.equal(trace.calls.length, 1);
      assert.equal(trace.calls[0]!.error, null);
    });

    it("refuses a call past a limit before it goes upstream, in its own error body", async () => {
      const { trace, session } = openSession({ max_turns: 0 });
      const before = seen.length;
      const res = await post(session.secret, callRoute.path, samples.request);
      assert.equal(res.status, 400);
      assert.equal(res.headers.get("x-should-retry"), "false");
      const text = await res.text();
      assert.equal(dialect.errorMessage(text), "rollout stopped: max_turns");
      assert.deepEqual(
        JSON.parse(text),
        dialect.errorBody(
          "rollout stopped: max_turns",
          "invalid_request_error",
          "rollout_stopped",
          400,
        ),
      );
      session.close();
      assert.equal(seen.length, before, "the refused call went upstream");
      assert.equal(trace.calls.length, 0);
      assert.equal(trace.stop_condition, "max_turns");
    });

    it("relays a provider's error with its status and records the call as failed", async () => {
      const { trace, session } = openSession();
      const res = await post(session.secret, callRoute.path, samples.request, "POST", {
        "x-conformance-fail": "1",
      });
      assert.equal(res.status, 400);
      assert.equal(dialect.errorMessage(await res.text()), samples.error.message);
      session.close();
      assert.equal(trace.calls.length, 1);
      assert.ok(trace.calls[0]!.error?.message.includes(samples.error.message));
      assert.equal(trace.calls[0]!.node, null);
    });

    it("relays its side requests with the run's model, recording nothing", async () => {
      for (const route of dialect.routes.filter((r) => r.relay)) {
        const { trace, session } = openSession({ max_turns: 0 });
        const res = await post(session.secret, route.path, samples.request);
        assert.equal(res.status, 200, await res.clone().text());
        assert.deepEqual(await res.json(), { relayed: route.path, model: "run-model" });
        session.close();
        assert.equal(trace.calls.length, 0);
        assert.equal(trace.nodes.length, 0);
        assert.equal(trace.stop_condition, null, "a side request is no turn a limit counts");
      }
    });

    it("refuses an unknown secret (401), a wrong method (405) and a closed session (409)", async () => {
      const unknown = await post("nope", callRoute.path, samples.request);
      assert.equal(unknown.status, 401);
      const unknownText = await unknown.text();
      assert.equal(dialect.errorMessage(unknownText), "invalid or missing interception secret");
      assert.deepEqual(
        JSON.parse(unknownText),
        dialect.errorBody(
          "invalid or missing interception secret",
          "invalid_request_error",
          "invalid_api_key",
          401,
        ),
      );
      const wrong = await post(null, callRoute.path, undefined, "GET");
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
      const closed = await post(session.secret, callRoute.path, samples.request);
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

  describe("answered by the oracle, in this dialect", () => {
    const oracle = inProcessOracle();
    let server: InterceptionServer;
    before(async () => {
      server = await startInterceptionServer({ dialects: [dialect] });
    });
    after(async () => {
      await server.close();
    });

    for (const streaming of [false, true]) {
      it(`renders a ${streaming ? "streamed" : "JSON"} tool call and a final answer`, async () => {
        const trace: SessionTrace = {
          id: `oracle-${streaming}`,
          nodes: [],
          calls: [],
          tools: [],
          stop_condition: null,
        };
        oracle.register(trace.id, { commands: ["echo hi"], text: "all done" });
        const session = server.open({
          trace,
          model: "run-model",
          sampling: {},
          client: oracle.client,
          limits: {},
        });
        const ask = async (body: Record<string, unknown>): Promise<DialectOutcome> => {
          const res = await fetch(`${server.url}${callRoute.path}`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              authorization: `Bearer ${session.secret}`,
            },
            body: JSON.stringify(body),
          });
          assert.equal(res.status, 200, await res.clone().text());
          if (!streaming) {
            const outcome = dialect.parseResponse(await res.json());
            assert.ok(outcome);
            return outcome;
          }
          assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
          const reader = dialect.streamReader(true);
          const kinds = readStream(reader, await res.text());
          assert.equal(kinds.at(-1), "terminal");
          assert.ok(!kinds.includes("malformed") && !kinds.includes("error"), kinds.join());
          return reader.result();
        };
        const first = await ask(samples.bashRequest(streaming));
        assert.equal(first.message.role, "assistant");
        const calls = first.message.role === "assistant" ? first.message.tool_calls : null;
        assert.equal(calls?.length, 1);
        assert.equal(calls![0]!.name, "bash");
        assert.deepEqual(JSON.parse(calls![0]!.arguments), { command: "echo hi" });
        const normalize = dialect.finishReason ?? traceFinishReason;
        assert.equal(normalize(first.finishReason), "tool_calls");
        const second = await ask(streaming ? samples.streamRequest : samples.request);
        assert.equal(second.message.content, "all done");
        assert.equal(normalize(second.finishReason), "stop");
        session.close();
        oracle.unregister(trace.id);
        assert.deepEqual(trace.calls.map((c) => c.finish_reason), ["tool_calls", "stop"]);
        assert.ok(trace.calls.every((c) => c.error === null && c.usage !== null));
      });
    }
  });
}

/** The chat dialect's normalisation, the default of `Dialect.finishReason`. */
function traceFinishReason(reason: string | null): string | null {
  return reason === "stop" || reason === "length" || reason === "tool_calls" ? reason : null;
}
