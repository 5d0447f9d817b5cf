/**
 * The interception server serving the OpenAI Responses API against a strict loopback
 * Responses provider: a relayed stream keeps the API's event order with the final event
 * last, the SDK's input-token count is relayed unrecorded, the program's fields reach the
 * provider as it sent them (so the provider's own refusals come back), and a stream cut
 * short, an `error` event and a failed response each fail the call with what happened,
 * never passing for an answer.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { createProviderClient, type ProviderClient } from "../lib/clients/provider_client.ts";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../lib/interception/mod.ts";
import { at } from "./_assert.ts";
import {
  type FakeResponses,
  type FakeResponsesReply,
  readResponsesStream,
  startFakeResponses,
} from "./fakes/responses_server.ts";

const KEY = "sk-interception-responses";

describe("interception of the Responses API", () => {
  let fake: FakeResponses;
  let client: ProviderClient;
  let server: InterceptionServer;
  let reply: FakeResponsesReply = "unset";
  let traces = 0;
  before(async () => {
    fake = await startFakeResponses({ apiKey: KEY, script: () => reply });
    client = createProviderClient({
      baseUrl: fake.url,
      apiKeyVar: "VF_IR_KEY",
      env: { VF_IR_KEY: KEY },
    });
    server = await startInterceptionServer();
  });
  after(async () => {
    await server.close();
    client.close();
    await fake.close();
  });

  /** One call in a session of its own; returns the program's response and the trace. */
  async function call(body: Record<string, unknown>) {
    const trace: SessionTrace = {
      id: `ir${++traces}`,
      nodes: [],
      calls: [],
      tools: [],
      stop_condition: null,
    };
    const session = server.open({ trace, model: "run-model", sampling: {}, client, limits: {} });
    let status = 0;
    let text: string | null = null;
    try {
      const res = await fetch(`${session.endpoint}/responses`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${session.secret}` },
        body: JSON.stringify({ model: "program-model", ...body }),
      });
      status = res.status;
      text = await res.text();
    } catch {
      // the response was cut off, before its head or within its body
    }
    session.close();
    return { status, text, trace, sent: fake.requests.at(-1)! };
  }

  it("relays a stream in the API's order, the final event last, and records it", async () => {
    reply = {
      reasoning: "Think.",
      text: "hello there, program",
      calls: [{ name: "f", arguments: "{}" }],
    };
    const { status, text, trace } = await call({ input: "hi", stream: true });
    assert.equal(status, 200);
    const { events, response } = readResponsesStream(text!);
    assert.equal(events.at(-1)!.type, "response.completed");
    assert.equal(response.status, "completed");
    assert.equal((response.output as unknown[]).length, 3);
    const c = at(trace.calls, 0);
    assert.equal(c.error, null);
    assert.equal(c.finish_reason, "tool_calls");
    assert.deepEqual(trace.nodes.at(-1)!.message, {
      role: "assistant",
      content: "hello there, program",
      reasoning_content: "Think.",
      tool_calls: [{ id: "call_resp_fake_1_0", name: "f", arguments: "{}" }],
      provider_state: response.output,
    });
  });

  it("passes the program's fields through, so the provider's refusal of one comes back", async () => {
    reply = "never sampled";
    const kept = await call({
      input: "hi",
      previous_response_id: "resp_earlier",
      store: false,
      metadata: { run: "x" },
    });
    assert.equal(kept.status, 200);
    assert.equal(kept.sent.body.previous_response_id, "resp_earlier");
    assert.deepEqual(kept.sent.body.metadata, { run: "x" });
    assert.equal(kept.sent.body.model, "run-model");
    const refused = await call({ input: "hi", seed: 7 });
    assert.equal(refused.status, 400);
    assert.equal(JSON.parse(refused.text!).error.message, "Unknown parameter: 'seed'.");
    assert.match(at(refused.trace.calls, 0).error?.message ?? "", /Unknown parameter: 'seed'/);
  });

  it("relays the SDK's input-token count with the run's model, recording nothing", async () => {
    const trace: SessionTrace = {
      id: "count",
      nodes: [],
      calls: [],
      tools: [],
      stop_condition: null,
    };
    const session = server.open({ trace, model: "run-model", sampling: {}, client, limits: {} });
    const sdk = new OpenAI({ baseURL: session.endpoint, apiKey: session.secret, maxRetries: 0 });
    const count = await sdk.responses.inputTokens.count({
      model: "program-model",
      input: "count me",
    });
    assert.deepEqual(count, { object: "response.input_tokens", input_tokens: 3 });
    assert.equal(fake.counts.at(-1)!.body.model, "run-model");
    assert.equal(fake.counts.at(-1)!.headers.authorization, `Bearer ${KEY}`);
    await assert.rejects(
      sdk.responses.inputTokens.count({ model: "m", input: "x", seed: 1 } as never),
      (e: unknown) =>
        e instanceof OpenAI.BadRequestError && /Unknown parameter: 'seed'/.test(e.message),
    );
    session.close();
    assert.deepEqual([trace.calls.length, trace.nodes.length], [0, 0]);
  });

  it("cuts the program's stream off when the provider's ends before its final event", async () => {
    reply = { text: "a long answer cut in the middle", dropAfterEvents: 5 };
    const { text, trace } = await call({ input: "hi", stream: true });
    assert.throws(() => readResponsesStream(text ?? ""), /without its final event/);
    const c = at(trace.calls, 0);
    assert.equal(c.node, null);
    assert.match(c.error?.message ?? "", /broke off: connection closed before the response ended/);
  });

  it("fails a stream that ends cleanly before its final event, as broken", async () => {
    reply = { text: "an answer that stops", endAfterEvents: 6 };
    const { text, trace } = await call({ input: "hi", stream: true });
    assert.throws(() => readResponsesStream(text ?? ""), /without its final event/);
    assert.match(
      at(trace.calls, 0).error?.message ?? "",
      /^provider stream ended without a completion$/,
    );
  });

  it("fails the call on an error event and on a failed response, saying why", async () => {
    reply = { streamError: { code: "server_error", message: "overloaded, try again" } };
    const streamed = await call({ input: "hi", stream: true });
    assert.match(streamed.text ?? "", /"type":"error"/, "the event reaches the program");
    assert.match(
      at(streamed.trace.calls, 0).error?.message ?? "",
      /provider stream reported an error: overloaded, try again$/,
    );
    reply = { failed: { code: "server_error", message: "The model failed." } };
    const json = await call({ input: "hi" });
    assert.equal(json.status, 502);
    const message = JSON.parse(json.text!).error.message;
    assert.equal(
      message,
      "upstream Responses request did not complete: failed: server_error: The model failed.",
    );
    assert.equal(at(json.trace.calls, 0).error?.message, message);
    assert.equal(json.trace.nodes.length, 0);
  });
});
