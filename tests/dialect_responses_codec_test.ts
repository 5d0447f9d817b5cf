/**
 * The Responses dialect's reading of requests and answers beyond the conformance samples:
 * how `input` items fold into trace messages (as verifiers/v1/dialects/responses.py@a60a606
 * folds them), the run's sampling imposed in the Responses shape, the settings recorded,
 * usage and finish reasons. Expected values are written by hand.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { openAIResponses } from "../lib/dialects/responses/mod.ts";
import type { DialectRequest } from "../kit/wire/dialect.ts";
import type { MessageNode } from "../kit/trace/types.ts";
import { commitTurn } from "../lib/interception/graph.ts";

function parse(body: Record<string, unknown>): DialectRequest {
  const request = openAIResponses.parseRequest(body);
  assert.ok(typeof request !== "string", String(request));
  return request;
}

describe("the Responses dialect reads", () => {
  it("a string input as one user message after the instructions", () => {
    assert.deepEqual(parse({ model: "m", instructions: "Be kind.", input: "hello" }).messages, [
      { role: "system", content: "Be kind." },
      { role: "user", content: "hello" },
    ]);
  });

  it("a run of assistant-side items as one assistant message keeping the items", () => {
    const run = [
      { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Plan." }] },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "Looking." }],
      },
      { type: "function_call", call_id: "c1", name: "ls", arguments: "{}" },
      { type: "function_call", call_id: "c2", name: "pwd", arguments: "{}" },
    ];
    const messages = parse({
      model: "m",
      input: [
        { role: "developer", content: "Rules." },
        { role: "user", content: [{ type: "input_text", text: "go" }] },
        ...run,
        { type: "function_call_output", call_id: "c1", output: "a\n" },
        { type: "function_call_output", call_id: "c2", output: { cwd: "/" } },
        { role: "user", content: [{ type: "input_image", image_url: "data:image/png;base64,AA" }] },
      ],
    }).messages;
    assert.deepEqual(messages, [
      { role: "system", content: "Rules." },
      { role: "user", content: [{ type: "text", text: "go" }] },
      {
        role: "assistant",
        content: "Looking.",
        reasoning_content: "Plan.",
        tool_calls: [
          { id: "c1", name: "ls", arguments: "{}" },
          { id: "c2", name: "pwd", arguments: "{}" },
        ],
        provider_state: run,
      },
      { role: "tool", tool_call_id: "c1", content: "a\n" },
      { role: "tool", tool_call_id: "c2", content: '{"cwd":"/"}' },
      {
        role: "user",
        content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AA" } }],
      },
    ]);
  });

  it("the request's items into the trace as a copy: it holds nothing of the program's body", () => {
    const item = { type: "function_call", call_id: "c", name: "f", arguments: "{}" };
    const nodes: MessageNode[] = [];
    const answer = { role: "assistant" as const, content: "ok", provider_state: [{ id: 1 }] };
    commitTurn(nodes, parse({ model: "m", input: [item] }).messages, answer);
    item.name = "changed";
    answer.provider_state[0]!.id = 2;
    const state = (n: number) =>
      (nodes[n]!.message as { provider_state: unknown[] }).provider_state;
    assert.deepEqual(state(0), [{
      type: "function_call",
      call_id: "c",
      name: "f",
      arguments: "{}",
    }]);
    assert.deepEqual(state(1), [{ id: 1 }]);
  });

  it("refuses an input that is neither a string nor items", () => {
    for (const input of [3, { role: "user" }, ["text"], [null]]) {
      assert.equal(typeof openAIResponses.parseRequest({ model: "m", input }), "string");
    }
  });
});

describe("the Responses dialect prepares the upstream body", () => {
  const request = parse({
    model: "program-model",
    input: "hi",
    temperature: 1.5,
    top_p: 0.2,
    max_output_tokens: 999,
    reasoning: { summary: "concise" },
    store: false,
    metadata: { k: "v" },
    tools: [{ type: "function", name: "f", parameters: { type: "object" } }, {
      type: "web_search",
    }],
  });

  it("with the run's sampling in the Responses shape, the program's own dropped", () => {
    const call = openAIResponses.prepare(
      request,
      "run-model",
      { temperature: 0.2, top_p: null, max_tokens: 64, reasoning_effort: "low", seed: 3 },
      { streamUsage: true },
    );
    assert.deepEqual(call.body, {
      model: "run-model",
      input: "hi",
      reasoning: { summary: "concise", effort: "low" },
      store: false,
      metadata: { k: "v" },
      tools: request.body.tools,
      temperature: 0.2,
      max_output_tokens: 64,
    });
    assert.deepEqual(call.sampling, {
      temperature: 0.2,
      reasoning: { summary: "concise" },
      reasoning_effort: "low",
      max_tokens: 64,
    });
    assert.deepEqual(call.tools, [
      { name: "f", description: "", parameters: { type: "object" }, strict: null },
    ]);
    assert.equal(call.stream, false);
    assert.equal(request.body.model, "program-model", "the program's body is left alone");
  });

  it("asking OpenAI's reasoning models for their encrypted reasoning and a summary", () => {
    const plain = parse({ model: "p", input: "hi", include: ["file_search_call.results"] });
    const call = openAIResponses.prepare(plain, "openai/gpt-5-mini", {}, { streamUsage: false });
    assert.deepEqual(call.body.include, [
      "file_search_call.results",
      "reasoning.encrypted_content",
    ]);
    assert.deepEqual(call.body.reasoning, { summary: "auto" });
    const other = openAIResponses.prepare(plain, "qwen/qwen3-8b", {}, { streamUsage: false });
    assert.deepEqual(other.body.include, ["file_search_call.results"]);
    assert.equal("reasoning" in other.body, false);
    const chat = openAIResponses.prepare(plain, "gpt-5-chat-latest", {}, { streamUsage: false });
    assert.equal("reasoning" in chat.body, false);
  });
});

describe("the Responses dialect reads answers", () => {
  const answer = (fields: Record<string, unknown>) =>
    openAIResponses.parseResponse({ id: "r", object: "response", output: [], ...fields });

  it("an incomplete response as length, whatever it holds", () => {
    const out = answer({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [{ type: "function_call", call_id: "c", name: "f", arguments: "{" }],
    });
    assert.equal(out?.finishReason, "length");
  });

  it("usage without details as unreported cached and reasoning tokens", () => {
    const out = answer({ status: "completed", usage: { input_tokens: 9, output_tokens: 2 } });
    assert.deepEqual(out?.usage, {
      prompt_tokens: 9,
      completion_tokens: 2,
      cached_input_tokens: null,
      reasoning_tokens: null,
      cost: null,
    });
    assert.equal(out?.finishReason, "stop");
    assert.equal(out?.message.content, null);
  });

  it("a failed or cancelled response as none, saying why", () => {
    const failed = {
      output: [],
      status: "failed",
      error: { code: "rate_limit_exceeded", message: "Slow down." },
    };
    assert.equal(openAIResponses.parseResponse(failed), null);
    assert.equal(
      openAIResponses.unanswered?.(failed),
      "upstream Responses request did not complete: failed: rate_limit_exceeded: Slow down.",
    );
    assert.equal(openAIResponses.parseResponse({ output: [], status: "cancelled" }), null);
    assert.match(openAIResponses.unanswered?.({ choices: [] }) ?? "", /no Responses object/);
  });
});
