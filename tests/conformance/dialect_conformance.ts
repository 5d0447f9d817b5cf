/**
 * The shared conformance suite of the {@link Dialect} contract. A dialect module calls
 * {@link dialectConformance} with samples of its wire format written by hand in the test
 * (never produced by the dialect under test): a program's requests, a provider's JSON and
 * streamed answers and an error body, with what each means in the trace's terms. The suite
 * checks the dialect reads them, that what it renders reads back the same, and
 * (dialect_served.ts, dialect_oracle.ts) that the interception server serving it records
 * the calls as the trace expects, refuses and fails in the dialect's error bodies, and
 * that the oracle answers in it. tests/dialect_conformance_test.ts runs it for every
 * dialect served.
 *
 * @module
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Message, ToolSpec } from "../../kit/trace/types.ts";
import type { Dialect, DialectOutcome } from "../../kit/wire/dialect.ts";
import { findRoute } from "../../kit/wire/dialect.ts";
import { SseSplitter } from "../../kit/wire/sse.ts";
import { oracleConformance } from "./dialect_oracle.ts";
import { readStream, servedConformance } from "./dialect_served.ts";

/** Hand-written samples of a dialect's wire format and what they mean. */
export interface DialectSamples {
  /** A program's non-streaming request body; it offers {@link DialectSamples.tools}. */
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
  /** A provider's error event in a stream (the raw event text) and the message it carries. */
  streamError: { text: string; message: string };
  /** Bodies that are not requests of this dialect. */
  invalidRequests: unknown[];
  /** The tools the request offers, as `trace.tools` records them. */
  tools: ToolSpec[];
  /** A request offering a `bash` tool (the oracle's test), streamed when `stream` is true. */
  bashRequest(stream: boolean): Record<string, unknown>;
}

/** Runs the conformance suite for `dialect` with `samples`. */
export function dialectConformance(name: string, dialect: Dialect, samples: DialectSamples): void {
  const callRoute = dialect.routes.find((r) => r.answer === undefined && !r.relay);

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

    it("reads a provider's error event as the call's error", () => {
      const reader = dialect.streamReader(true);
      const splitter = new SseSplitter();
      const verdicts = [...splitter.push(samples.streamError.text), ...splitter.end()]
        .map((e) => reader.read(e));
      assert.deepEqual(verdicts.at(-1), { kind: "error", message: samples.streamError.message });
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

    servedConformance(dialect, samples, callRoute!);
    oracleConformance(dialect, samples, callRoute!);
  });
}
