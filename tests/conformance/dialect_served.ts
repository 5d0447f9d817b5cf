/**
 * The part of the dialect conformance suite that serves the dialect: the interception
 * server recording its calls against a loopback upstream answering the samples as they
 * are (auth, scrubbing, limits, errors, side requests).
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Dialect, DialectRoute, DialectStreamReader } from "../../kit/wire/dialect.ts";
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
import type { DialectSamples } from "./dialect_conformance.ts";

/** Reads a raw SSE text event by event; returns each verdict's kind. */
export function readStream(reader: DialectStreamReader, text: string): string[] {
  const splitter = new SseSplitter();
  return [...splitter.push(text), ...splitter.end()].map((e) => reader.read(e).kind);
}

/** The provider's key in the served cases: it must never come back to the program. */
const PROVIDER_KEY = "sk-conformance-KEY-7f3a91";

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
    const seen: {
      path: string;
      session: string | undefined;
      headers: http.IncomingHttpHeaders;
      body: unknown;
    }[] = [];

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
            headers: req.headers,
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
          if (req.headers["x-conformance-fail"] === "echo") {
            // a provider that echoes the key it was sent in its error
            res.writeHead(400, { "content-type": "application/json" });
            const echoed = `${samples.error.message} (key ${PROVIDER_KEY})`;
            return res.end(samples.error.text.replace(samples.error.message, echoed));
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
      client = createProviderClient({
        baseUrl: `http://127.0.0.1:${port}/v1`,
        apiKeyVar: "CONFORMANCE_KEY",
        env: { CONFORMANCE_KEY: PROVIDER_KEY },
      });
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

    it("sends the provider's key as the dialect's auth; scrubs it from what comes back", async () => {
      const { trace, session } = openSession();
      const res = await post(session.secret, callRoute.path, samples.request, "POST", {
        "x-conformance-fail": "echo",
      });
      assert.equal(res.status, 400);
      const text = await res.text();
      assert.ok(!text.includes(PROVIDER_KEY), text);
      assert.ok(dialect.errorMessage(text).startsWith(`${samples.error.message} (key `), text);
      session.close();
      const auth = dialect.upstreamAuth?.(PROVIDER_KEY) ??
        { authorization: `Bearer ${PROVIDER_KEY}` };
      const sent = seen.at(-1)!.headers;
      for (const [name, value] of Object.entries(auth)) {
        assert.equal(sent[name.toLowerCase()], value);
      }
      for (const [name, value] of Object.entries(dialect.upstreamHeaders ?? {})) {
        assert.equal(sent[name.toLowerCase()], value);
      }
      if (!("authorization" in auth)) assert.equal(sent.authorization, undefined);
      assert.ok(!JSON.stringify(trace).includes(PROVIDER_KEY), "the key is in the trace");
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
}

/** The chat dialect's normalisation, the default of `Dialect.finishReason`. */
export function traceFinishReason(reason: string | null): string | null {
  return reason === "stop" || reason === "length" || reason === "tool_calls" ? reason : null;
}
