/**
 * Auxiliary calls — those an agent makes on its own, named by its harness (Claude Code's
 * session title) — through the real interception server against a strict chat fake: they
 * are recorded with `auxiliary` set, are not turns (the turn limit lets them through and
 * does not count them), are never the conversation's end, and their failure fails nothing.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  type InterceptionServer,
  type SessionTrace,
  startInterceptionServer,
} from "../lib/interception/mod.ts";
import { createProviderClient, type ProviderClient } from "../lib/clients/provider_client.ts";
import { lastReply, numTurns } from "../kit/trace/derived.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";

const KEY = "sk-upstream-aux-31c9";
const TITLE_SYSTEM = "You write session titles.";

let server: InterceptionServer;
let fake: FakeOpenAI;
let client: ProviderClient;
before(async () => {
  server = await startInterceptionServer();
  fake = await startFakeOpenAI({
    apiKey: KEY,
    script: (body) => {
      const first = body.messages[0];
      if (first.role === "system" && first.content === TITLE_SYSTEM) {
        return JSON.stringify(body.messages).includes("fail title")
          ? { status: 500, error: "title service down" }
          : "A title";
      }
      return "The agent's answer";
    },
  });
  client = createProviderClient({
    baseUrl: fake.url,
    apiKeyVar: "AUX_KEY",
    env: { AUX_KEY: KEY },
  });
});
after(async () => {
  client.close();
  await fake.close();
  await server.close();
});

function open(maxTurns: number | null) {
  const trace: SessionTrace = {
    id: crypto.randomUUID().replaceAll("-", ""),
    nodes: [],
    calls: [],
    tools: [],
    stop_condition: null,
  };
  const session = server.open({
    trace,
    model: "run-model",
    sampling: {},
    client,
    limits: { max_turns: maxTurns },
    auxiliary: ({ body }) =>
      (body as { messages: { content: string }[] }).messages[0]?.content === TITLE_SYSTEM
        ? "session_title"
        : null,
  });
  return { trace, session };
}

function post(endpoint: string, secret: string, messages: unknown[]): Promise<Response> {
  return fetch(`${endpoint}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${secret}` },
    body: JSON.stringify({ model: "agent-model", messages }),
  });
}

const titleCall = (text: string) => [
  { role: "system", content: TITLE_SYSTEM },
  { role: "user", content: text },
];

describe("auxiliary calls", () => {
  it("are recorded and marked, pass the turn limit, and are not the answer", async () => {
    const { trace, session } = await open(1);
    const own = await post(session.endpoint, session.secret, [{ role: "user", content: "hi" }]);
    assert.equal(own.status, 200);
    await own.text();
    // the agent's one turn is used: its title call still goes through, and comes last
    const title = await post(session.endpoint, session.secret, titleCall("hi"));
    assert.equal(title.status, 200, await title.clone().text());
    await title.text();
    assert.deepEqual(trace.calls.map((c) => c.auxiliary ?? null), [null, "session_title"]);
    assert.equal(numTurns(trace), 1);
    assert.equal(lastReply(trace), "The agent's answer");
    // a second turn of the agent's own is refused by the limit
    const again = await post(session.endpoint, session.secret, [{ role: "user", content: "more" }]);
    assert.equal(again.status, 400);
    assert.match(await again.text(), /rollout stopped: max_turns/);
    session.close();
  });

  it("a failed auxiliary call fails nothing", async () => {
    const { trace, session } = await open(null);
    const own = await post(session.endpoint, session.secret, [{ role: "user", content: "hi" }]);
    await own.text();
    const title = await post(session.endpoint, session.secret, titleCall("fail title"));
    assert.equal(title.status, 500);
    await title.text();
    assert.equal(session.providerError, null, "the rollout's own calls all succeeded");
    assert.equal(trace.calls[1]?.auxiliary, "session_title");
    assert.ok(trace.calls[1]?.error !== null);
    session.close();
  });
});
