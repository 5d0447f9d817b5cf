/**
 * The Anthropic dialect against the strict loopback provider (tests/fakes/anthropic_server.ts),
 * through a live interception server: the fake refuses what the API refuses; the run's model
 * and sampling are imposed in Messages' shape (`max_tokens` the program's unless the run sets
 * one; `temperature` and `top_p` the run's alone); what the provider refuses comes back with
 * its status and body, an `error` event mid-stream fails the call; the program's own
 * `anthropic-version` is the one sent.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic_server.ts";
import { createProviderClient, type ProviderClient } from "../lib/clients/provider_client.ts";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../lib/interception/mod.ts";
import { at } from "./_assert.ts";

const KEY = "sk-ant-strict-KEY-91ab";
const USER = [{ role: "user", content: "hi" }];

describe("the strict Anthropic fake", () => {
  let fake: FakeAnthropic;
  before(async () => {
    fake = await startFakeAnthropic({ apiKey: KEY, script: () => ({ text: "ok" }) });
  });
  after(async () => await fake.close());

  const post = (headers: Record<string, string>, body: unknown, path = "/v1/messages") =>
    fetch(`${fake.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  const good = { "x-api-key": KEY, "anthropic-version": "2023-06-01" };

  for (
    const [what, headers, body, status, message] of [
      [
        "a bearer token instead of x-api-key",
        {
          authorization: `Bearer ${KEY}`,
          "anthropic-version": "2023-06-01",
        },
        { model: "m", max_tokens: 5, messages: USER },
        401,
        /x-api-key/,
      ],
      [
        "no anthropic-version",
        { "x-api-key": KEY },
        {
          model: "m",
          max_tokens: 5,
          messages: USER,
        },
        400,
        /anthropic-version/,
      ],
      ["no max_tokens", good, { model: "m", messages: USER }, 400, /max_tokens: Field required/],
      [
        "a tool_result answering no tool_use",
        good,
        {
          model: "m",
          max_tokens: 5,
          messages: [{
            role: "user",
            content: [{ type: "tool_result", tool_use_id: "toolu_x", content: "1" }],
          }],
        },
        400,
        /tool_use_id/,
      ],
      [
        "temperature above 1",
        good,
        {
          model: "m",
          max_tokens: 5,
          messages: USER,
          temperature: 1.5,
        },
        400,
        /temperature/,
      ],
    ] as const
  ) {
    it(`refuses ${what}`, async () => {
      const res = await post(headers, body);
      assert.equal(res.status, status);
      const json = await res.json();
      assert.equal(json.type, "error");
      assert.match(json.error.message, message);
    });
  }

  it("answers a valid request", async () => {
    const res = await post(good, { model: "m", max_tokens: 5, messages: USER });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).content[0].text, "ok");
  });
});

describe("the Anthropic dialect served against it", () => {
  let fake: FakeAnthropic;
  let client: ProviderClient;
  let server: InterceptionServer;
  before(async () => {
    fake = await startFakeAnthropic({
      apiKey: KEY,
      script: (body) =>
        body.max_tokens === 13
          ? { text: "x", streamError: { type: "overloaded_error", message: "Overloaded" } }
          : { text: "fine" },
    });
    client = createProviderClient({
      baseUrl: fake.url,
      apiKeyVar: "ANT_KEY",
      env: { ANT_KEY: KEY },
    });
    server = await startInterceptionServer();
  });
  after(async () => {
    await server.close();
    client.close();
    await fake.close();
  });

  const open = (sampling: Record<string, unknown>) => {
    const trace: SessionTrace = { id: "t1", nodes: [], calls: [], tools: [], stop_condition: null };
    return { trace, session: server.open({ trace, model: "run-m", sampling, client, limits: {} }) };
  };
  const call = (secret: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": secret, ...headers },
      body: JSON.stringify(body),
    });

  it("relays the provider's refusal of a body without max_tokens, in its shape", async () => {
    const { trace, session } = open({});
    const res = await call(session.secret, { model: "p", messages: USER });
    assert.equal(res.status, 400);
    const json = await res.json();
    assert.deepEqual(json.error, {
      type: "invalid_request_error",
      message: "max_tokens: Field required",
    });
    session.close();
    assert.equal(trace.calls.length, 1);
    assert.match(at(trace.calls, 0).error!.message, /HTTP 400: max_tokens: Field required/);
  });

  it("imposes the run's max_tokens and sampling; the program's temperature is dropped", async () => {
    const { trace, session } = open({ max_tokens: 100, reasoning_effort: "low", top_p: null });
    const res = await call(session.secret, {
      model: "p",
      max_tokens: 5,
      temperature: 0.9,
      messages: USER,
      output_config: { format: "text" },
    }, { "anthropic-version": "2024-01-01" });
    assert.equal(res.status, 200, await res.clone().text());
    await res.text();
    session.close();
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.body.model, "run-m");
    assert.equal(sent.body.max_tokens, 100);
    assert.equal("temperature" in sent.body, false);
    assert.deepEqual(sent.body.output_config, { format: "text", effort: "low" });
    assert.equal(sent.headers["anthropic-version"], "2024-01-01");
    assert.deepEqual(at(trace.calls, 0).sampling, {
      max_tokens: 100,
      output_config: { format: "text" },
      reasoning_effort: "low",
    });
  });

  it("keeps the program's max_tokens when the run sets none; sends an API version", async () => {
    const { session } = open({});
    const res = await call(session.secret, { model: "p", max_tokens: 7, messages: USER });
    assert.equal(res.status, 200);
    await res.text();
    session.close();
    const sent = fake.requests.at(-1)!;
    assert.equal(sent.body.max_tokens, 7);
    assert.equal(sent.headers["anthropic-version"], "2023-06-01");
  });

  it("an error event mid-stream reaches the program and fails the call", async () => {
    const { trace, session } = open({});
    const res = await call(session.secret, {
      model: "p",
      max_tokens: 13,
      stream: true,
      messages: USER,
    });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /event: error\ndata: .*"overloaded_error"/);
    assert.doesNotMatch(text, /message_stop/);
    session.close();
    assert.equal(trace.calls.length, 1);
    assert.match(at(trace.calls, 0).error!.message, /stream reported an error: Overloaded/);
    assert.equal(at(trace.calls, 0).node, null);
  });
});
