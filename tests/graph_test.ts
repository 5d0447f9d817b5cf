import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { addMessages, canonicalJson, commitTurn, sameMessage } from "../lib/interception/graph.ts";
import { branches, lastMessages, lastReply, numTurns } from "../kit/trace/derived.ts";
import type { Message, MessageNode } from "../kit/trace/types.ts";
import { at } from "./_assert.ts";

const sys: Message = { role: "system", content: "be brief" };
const user: Message = { role: "user", content: "hi" };

/**
 * The graph's notion of sameness written as one canonical text (the key it matched by
 * before): two messages are the same exactly when their keys are equal.
 */
function messageKey(message: Message): string {
  const m = message as Record<string, unknown>;
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls as Record<string, unknown>[] : [];
  const args = (text: unknown) => {
    const raw = typeof text === "string" ? text : "";
    try {
      return canonicalJson(JSON.parse(raw));
    } catch {
      return raw;
    }
  };
  return canonicalJson({
    role: m.role,
    content: m.content ?? "",
    reasoning: m.reasoning_content ?? "",
    provider_state: m.provider_state ?? null,
    tool_calls: calls.map((tc) => ({
      id: tc.id ?? "",
      name: tc.name ?? "",
      arguments: args(tc.arguments),
    })),
    tool_call_id: m.tool_call_id ?? null,
  });
}

describe("sameMessage()", () => {
  it("ignores null vs empty content and tool-call argument key order and whitespace", () => {
    const a: Message = {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", name: "back", arguments: '{"message": "hi", "n": 1}' }],
    };
    const b: Message = {
      role: "assistant",
      content: "",
      tool_calls: [{ id: "c1", name: "back", arguments: '{"n":1,"message":"hi"}' }],
    };
    assert.equal(sameMessage(a, b), true);
  });

  it("tolerates invalid JSON arguments and still tells different ones apart", () => {
    const m = (args: string): Message => ({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", name: "back", arguments: args }],
    });
    assert.equal(sameMessage(m("{not json"), m("{not json")), true);
    assert.equal(sameMessage(m("{not json"), m("{not json!")), false);
  });

  it("tells apart role, content, reasoning, tool_call_id, tool names and provider state", () => {
    const base: Message = { role: "assistant", content: "x" };
    const variants: Message[] = [
      { role: "user", content: "x" },
      { role: "assistant", content: "y" },
      { role: "assistant", content: "x", reasoning_content: "think" },
      { role: "assistant", content: "x", provider_state: { id: 1 } },
      { role: "assistant", content: "x", tool_calls: [{ id: "c", name: "a", arguments: "{}" }] },
    ];
    const all = [base, ...variants];
    for (const [i, a] of all.entries()) {
      for (const [j, b] of all.entries()) assert.equal(sameMessage(a, b), i === j);
    }
    assert.equal(
      sameMessage(
        { role: "tool", tool_call_id: "a", content: "r" },
        { role: "tool", tool_call_id: "b", content: "r" },
      ),
      false,
    );
  });

  it("holds exactly when the messages' keys are equal, on every pair of a mixed set", () => {
    const call = (args: unknown, id: unknown = "c1", name: unknown = "back") => ({
      id,
      name,
      arguments: args,
    });
    const messages = [
      { role: "assistant", content: "x" },
      { role: "assistant", content: null },
      { role: "assistant", content: "" },
      { role: "assistant" },
      { role: "user", content: "x" },
      { role: "assistant", content: "x", reasoning_content: "think" },
      { role: "assistant", content: "x", reasoning_content: null },
      { role: "assistant", content: "x", provider_state: { b: 1, a: [2] } },
      { role: "assistant", content: "x", provider_state: { a: [2], b: 1 } },
      { role: "assistant", content: [{ type: "text", text: "x" }] },
      { role: "assistant", content: '[{"text":"x","type":"text"}]' },
      { role: "assistant", content: [{ text: "x", type: "text" }] },
      { role: "assistant", content: [{ text: "x", type: "text", detail: undefined }] },
      { role: "assistant", content: [{ text: "x", type: "text", detail: null }] },
      { role: "assistant", content: [{ text: "x", type: "text" }, { type: "text", text: "y" }] },
      { role: "assistant", content: [{ text: "y", type: "text" }, { type: "text", text: "x" }] },
      { role: "assistant", content: [{ text: ["x"], type: "text" }] },
      { role: "assistant", content: [{ text: { 0: "x" }, type: "text" }] },
      { role: "assistant", content: [undefined] },
      { role: "assistant", content: [null] },
      { role: "assistant", content: [Number.NaN] },
      { role: "assistant", content: [0] },
      { role: "assistant", content: [-0] },
      { role: "assistant", content: ["0"] },
      { role: "assistant", content: [false] },
      { role: "assistant", content: "x", provider_state: [{ b: 1, a: [2] }] },
      { role: "assistant", content: "x", provider_state: { a: [2], b: 1, c: undefined } },
      { role: "assistant", content: "x", provider_state: { a: [2, 3], b: 1 } },
      { role: "assistant", content: null, tool_calls: [call('{"a": 1, "b": 2}')] },
      { role: "assistant", content: "", tool_calls: [call('{"b":2,"a":1}')] },
      { role: "assistant", content: "", tool_calls: [call("{not json")] },
      { role: "assistant", content: "", tool_calls: [call("{not json!")] },
      { role: "assistant", content: "", tool_calls: [call("{}", 1)] },
      { role: "assistant", content: "", tool_calls: [call("{}", "1")] },
      { role: "assistant", content: "", tool_calls: [call("{}", "c1", "other")] },
      { role: "assistant", content: "", tool_calls: [call("{}"), call("{}")] },
      { role: "assistant", content: "", tool_calls: [] },
      { role: "tool", tool_call_id: "a", content: "r" },
      { role: "tool", tool_call_id: "b", content: "r" },
      { role: "tool", tool_call_id: null, content: "r" },
      { role: "tool", content: "r" },
    ] as unknown as Message[];
    let same = 0;
    for (const a of messages) {
      for (const b of messages) {
        const expected = messageKey(a) === messageKey(b);
        if (expected) same++;
        assert.equal(sameMessage(a, b), expected, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
      }
    }
    assert.ok(same > messages.length, "the set holds pairs that are the same without being equal");
  });
});

describe("sameMessage() on provider items (verifiers/v1/graph.py message_hash)", () => {
  const call = { id: "c1", name: "ls", arguments: "{}" };
  const answered = (state: unknown): Message => ({
    role: "assistant",
    content: "Looking.",
    reasoning_content: "Plan.",
    tool_calls: [call],
    provider_state: state,
  });
  const sampled = [
    { id: "rs_1", type: "reasoning", summary: [{ type: "summary_text", text: "Plan." }] },
    {
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Looking.", annotations: [] }],
    },
    { id: "fc_1", type: "function_call", status: "completed", call_id: "c1", name: "ls" },
  ];

  it("matches items sent back re-shaped, or none at all, when they carry no opaque state", () => {
    const resent = [
      { type: "reasoning", id: "rs_1", summary: [], content: null, encrypted_content: null },
      { role: "assistant", content: "Looking." },
      { type: "function_call", call_id: "c1", name: "ls", arguments: "{}" },
    ];
    assert.equal(sameMessage(answered(sampled), answered(resent)), true);
    assert.equal(sameMessage(answered(sampled), answered(undefined)), true);
    assert.equal(sameMessage(answered([]), answered(null)), true);
  });

  it("tells apart opaque state, a refusal part, and items the message does not represent", () => {
    const withState = (extra: Record<string, unknown>) => [{ ...sampled[0], ...extra }];
    const variants = [
      withState({ encrypted_content: "enc-a" }),
      withState({ encrypted_content: "enc-b" }),
      [{ type: "message", role: "assistant", content: [{ type: "refusal", refusal: "no" }] }],
      [{ type: "function_call", call_id: "other", name: "ls", arguments: "{}" }],
      [{ type: "web_search_call", id: "ws_1", status: "completed" }],
    ];
    const all = [sampled, ...variants];
    for (const [i, a] of all.entries()) {
      for (const [j, b] of all.entries()) {
        assert.equal(sameMessage(answered(a), answered(b)), i === j, `${i} vs ${j}`);
      }
    }
  });
});

describe("canonicalJson()", () => {
  it("sorts keys at every depth and drops whitespace", () => {
    assert.equal(
      canonicalJson({ b: [1, { d: 2, c: null }], a: "x" }),
      '{"a":"x","b":[1,{"c":null,"d":2}]}',
    );
  });
});

describe("graph", () => {
  it("chains turns: a request repeating the conversation extends it", () => {
    const nodes: MessageNode[] = [];
    const reply1: Message = { role: "assistant", content: "hello" };
    const i1 = commitTurn(nodes, [sys, user], reply1);
    assert.equal(i1, 2);
    const user2: Message = { role: "user", content: "again" };
    // The program sends back a fresh copy of the assistant message (content null ≡ "").
    const i2 = commitTurn(nodes, [sys, user, { role: "assistant", content: "hello" }, user2], {
      role: "assistant",
      content: "bye",
    });
    assert.equal(nodes.length, 5);
    assert.equal(i2, 4);
    assert.deepEqual(nodes.map((n) => n.parent), [null, 0, 1, 2, 3]);
    assert.deepEqual(nodes.map((n) => n.sampled), [false, false, true, false, true]);
    assert.deepEqual(branches(nodes), [[0, 1, 2, 3, 4]]);
    assert.equal(numTurns({ nodes }), 2);
    assert.equal(lastReply({ nodes }), "bye");
  });

  it("forks when the reasoning differs", () => {
    const nodes: MessageNode[] = [];
    commitTurn(nodes, [user], { role: "assistant", content: "a", reasoning_content: "r1" });
    const next: Message = { role: "user", content: "more" };
    commitTurn(nodes, [user, { role: "assistant", content: "a", reasoning_content: "r2" }, next], {
      role: "assistant",
      content: "b",
    });
    assert.equal(branches(nodes).length, 2);
    assert.deepEqual(nodes.map((n) => n.parent), [null, 0, 0, 2, 3]);
    assert.equal(numTurns({ nodes }), 2);
  });

  it("keeps prompt-supplied assistant and tool messages unsampled", () => {
    const nodes: MessageNode[] = [];
    const prompt: Message[] = [
      { role: "user", content: "call it" },
      { role: "assistant", content: null, tool_calls: [{ id: "t1", name: "f", arguments: "{}" }] },
      { role: "tool", tool_call_id: "t1", content: "42" },
    ];
    commitTurn(nodes, prompt, { role: "assistant", content: "it is 42" });
    assert.deepEqual(nodes.map((n) => n.sampled), [false, false, false, true]);
    assert.equal(numTurns({ nodes }), 1);
  });

  it("addMessages() returns the last matched node and appends nothing for a known prefix", () => {
    const nodes: MessageNode[] = [];
    commitTurn(nodes, [sys, user], { role: "assistant", content: "x" });
    assert.equal(addMessages(nodes, [{ role: "system", content: "be brief" }]), 0);
    assert.equal(nodes.length, 3);
    assert.equal(addMessages(nodes, []), null);
    assert.equal(addMessages(nodes, [{ role: "system", content: "other" }]), 3);
    assert.equal(at(nodes, 3).parent, null);
  });

  it("keeps matching right when the graph is changed other than by appending", () => {
    const nodes: MessageNode[] = [];
    const reply: Message = { role: "assistant", content: "one" };
    commitTurn(nodes, [sys, user], reply);
    assert.equal(addMessages(nodes, [sys, user, reply]), 2);
    // the same number of nodes, different ones: the index must not trust what it read
    nodes.splice(0, nodes.length, ...[
      { parent: null, message: user, sampled: false, timestamp: 0 },
      { parent: 0, message: sys, sampled: false, timestamp: 0 },
      { parent: 1, message: reply, sampled: true, timestamp: 0 },
    ]);
    assert.equal(addMessages(nodes, [user, sys, reply]), 2);
    assert.equal(addMessages(nodes, [sys, user]), 4);
    nodes.length = 1;
    assert.equal(addMessages(nodes, [user, sys]), 1);
    assert.equal(nodes[1]!.parent, 0);
  });
});

describe("lastMessages", () => {
  /** The last branch's messages the general way: every branch listed, the last one taken. */
  const viaBranches = (nodes: MessageNode[]) => {
    const all = branches(nodes);
    return (all[all.length - 1] ?? []).map((i) => nodes[i]!.message);
  };
  /** A graph of `n` nodes with random parents: earlier nodes only, or anywhere when `forward`. */
  const randomGraph = (n: number, seed: number, forward: boolean): MessageNode[] => {
    let x = seed;
    const rand = (k: number) => (x = (x * 1103515245 + 12345) % 2147483648) % k;
    return Array.from({ length: n }, (_, i) => {
      const pick = forward ? rand(n + 1) : rand(i + 1);
      const parent = forward
        ? (pick === n || pick === i ? null : pick)
        : (pick === i ? null : pick);
      return { parent, message: { role: "user", content: `m${i}` }, sampled: false, timestamp: 0 };
    });
  };

  it("is the last branch's messages on graphs whose parents come first (the recorded kind)", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const nodes = randomGraph(1 + (seed % 12), seed, false);
      assert.deepEqual(lastMessages({ nodes }), viaBranches(nodes), `seed ${seed}`);
    }
    assert.deepEqual(lastMessages({ nodes: [] }), []);
  });

  it("is the same on graphs whose parents point forward (a hand-built trace)", () => {
    let forwardSeen = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const nodes = randomGraph(2 + (seed % 10), seed, true);
      if (nodes.some((n, i) => n.parent !== null && n.parent > i)) forwardSeen++;
      // a cycle has no root to walk to: branches() does not terminate on one either
      const acyclic = nodes.every((_, i) => {
        const seen = new Set<number>();
        for (let j: number | null = i; j !== null; j = nodes[j]!.parent) {
          if (seen.has(j)) return false;
          seen.add(j);
        }
        return true;
      });
      if (!acyclic) continue;
      assert.deepEqual(lastMessages({ nodes }), viaBranches(nodes), `seed ${seed}`);
    }
    assert.ok(forwardSeen > 20, `forward graphs were tried (${forwardSeen})`);
  });
});
