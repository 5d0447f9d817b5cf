/**
 * The part of the dialect conformance suite the oracle answers: with no provider at all,
 * the interception server serving the dialect gets the oracle's tool call and final answer
 * in that dialect, JSON and streamed, and records both calls.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import type { Dialect, DialectOutcome, DialectRoute } from "../../kit/wire/dialect.ts";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../../lib/interception/mod.ts";
import { inProcessOracle } from "../../lib/clients/oracle.ts";
import type { DialectSamples } from "./dialect_conformance.ts";
import { readStream, traceFinishReason } from "./dialect_served.ts";

/** The oracle's cases for `dialect` (its model-call route `callRoute`). */
export function oracleConformance(
  dialect: Dialect,
  samples: DialectSamples,
  callRoute: DialectRoute,
): void {
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
