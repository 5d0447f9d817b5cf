/**
 * The user-sim env end to end against a scripted loopback model playing both sides: the
 * user (its own model) opens from its scenario, the assistant answers turn by turn, the
 * conversation ends on the user's done marker or its max_turns, and both traces are
 * written as Python writes them and read by Python v1's models.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { evalInProcess } from "./_eval.ts";
import { assertExchangeable } from "./_python_v1_exchange.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import type { Trace } from "../kit/trace/types.ts";
import { GREETING } from "../plugins/envs/user-sim/mod.ts";

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;
type Msg = { role: string; content: string };

describe("user-sim", () => {
  let fake: Fake;
  /** Whether the scripted user ever says it is done. */
  let userEnds = true;
  let dir: string;
  before(async () => {
    process.env.VF_USER_SIM_KEY = "sk-user-sim";
    dir = mkdtempSync(join(tmpdir(), "vf-user-sim-"));
    writeFileSync(
      join(dir, "words.jsonl"),
      ["banana", "cherry"].map((w, idx) => JSON.stringify({ idx, prompt: w, answer: w })).join(
        "\n",
      ),
    );
    fake = await startFakeOpenAI({
      apiKey: "sk-user-sim",
      script: (body) => {
        const messages = body.messages as Msg[];
        const last = messages.at(-1)!.content;
        if (body.model === "user-model") {
          const system = messages[0]!;
          assert.equal(system.role, "system");
          const scenario = system.content.split("for you:\n\n")[1]!.split("\n\nRules:")[0]!;
          if (last === GREETING) return "I need a word.";
          if (userEnds && last === scenario) return "###DONE###";
          return `The word is ${scenario}`;
        }
        assert.ok(!messages.some((m) => m.content === GREETING), "the greeting is the user's only");
        if (last.startsWith("The word is ")) return last.slice("The word is ".length);
        if (last.startsWith("reverse: ")) {
          return `<reversed_text>${Array.from(last.slice(9)).reverse().join("")}</reversed_text>`;
        }
        return "Which word?";
      },
    });
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const args = (taskset: string[], extra: string[]) => [
    ...taskset,
    "-c",
    "1",
    "-m",
    "assistant-model",
    "--env.id",
    "user-sim",
    "--env.assistant.harness.id",
    "null",
    "--env.user.model",
    "user-model",
    "--client.base-url",
    fake.url,
    "--client.api-key-var",
    "VF_USER_SIM_KEY",
    ...extra,
  ];
  const words = () => [
    "jsonl",
    "--env.taskset.path",
    join(dir, "words.jsonl"),
    "--env.taskset.task.judges",
    JSON.stringify([{ id: "match" }]),
  ];

  const bySide = (traces: Trace[]) => {
    const [assistant, user] = traces;
    assert.deepEqual(traces.map((t) => t.agent.name), ["assistant", "user"]);
    return { assistant: assistant!, user: user! };
  };
  const said = (t: Trace) => t.nodes.filter((n) => n.sampled).map((n) => n.message.content);
  const heard = (t: Trace) =>
    t.nodes.filter((n) => !n.sampled && n.message.role === "user").map((n) => n.message.content);

  it("the user opens, the two talk turn by turn, the done marker ends it", async () => {
    userEnds = true;
    const before = fake.requests.length;
    const out = await evalInProcess(args(words(), []));
    const models = fake.requests.slice(before).map((r) => (r.body as { model: string }).model);
    const episode = ["user", "assistant", "user", "assistant", "user"].map((m) => `${m}-model`);
    assert.deepEqual(models, [...episode, ...episode]);
    assert.equal(out.episodes.length, 2);
    for (const ep of out.episodes) {
      assert.equal(ep.env.id, "user-sim+jsonl");
      assert.equal(ep.ok, true, JSON.stringify(ep.errors));
      const { assistant, user } = bySide(ep.traces);
      const word = ep.task.data.answer as string;
      assert.deepEqual(said(user), ["I need a word.", `The word is ${word}`, "###DONE###"]);
      assert.deepEqual(said(assistant), ["Which word?", word]);
      assert.deepEqual(heard(assistant), ["I need a word.", `The word is ${word}`]);
      assert.equal(assistant.rewards.match?.score, 1);
      assert.deepEqual(user.rewards, {}, "the user's task has none of the taskset's scoring");
      assert.equal(assistant.metrics.user_turns, 3);
      assert.equal(assistant.stop_condition, "user_closed");
      assert.equal(user.stop_condition, "user_closed");
      assert.equal(assistant.agent.trainable, true);
      assert.equal(user.agent.trainable, false);
      assert.equal(
        assistant.task.data.prompt,
        undefined,
        "the assistant plays the prompt-less row",
      );
      assert.notEqual(assistant.task.hash, ep.task.hash);
      assert.equal(user.task.type, "Task");
      assert.equal(user.agent.config.max_turns, 8);
      assert.equal((user.agent.config.harness as { id: string }).id, "null");
      assert.equal(user.agent.config.model, "user-model");
    }
    const config = JSON.parse(readFileSync(join(out.runDir, "configs", "eval.json"), "utf8"));
    assert.equal(config.env.id, "user-sim");
    assert.equal(config.env.agent, undefined);
    assert.equal(config.env.assistant.harness.id, "null");
    assert.equal(config.env.user.max_turns, 8);
    assert.equal(config.env.done_marker, "###DONE###");
    assert.equal(out.summary.counts.traces, 4);
    assertExchangeable(out);
  });

  it("a user that never ends is cut off by its max_turns", async () => {
    userEnds = false;
    const out = await evalInProcess(args(words(), ["--env.user.max-turns", "3", "-n", "1"]));
    const [ep] = out.episodes;
    assert.equal(ep!.ok, true, JSON.stringify(ep!.errors));
    const { assistant, user } = bySide(ep!.traces);
    assert.equal(user.stop_condition, "max_turns");
    assert.equal(said(user).length, 3);
    assert.equal(said(assistant).length, 3);
    assert.equal(assistant.metrics.user_turns, 3);
    assert.equal(assistant.stop_condition, "user_closed");
    assertExchangeable(out);
  });

  it("the assistant's own stop (reverse-text's single_turn, before its 2nd call) ends it", async () => {
    userEnds = true;
    const out = await evalInProcess(args(["reverse-text", "-n", "1"], []));
    const [ep] = out.episodes;
    assert.equal(ep!.ok, true, JSON.stringify(ep!.errors));
    const { assistant, user } = bySide(ep!.traces);
    assert.equal(assistant.stop_condition, "single_turn");
    assert.equal(said(assistant).length, 1);
    assert.equal(user.stop_condition, "user_closed");
    assert.equal(assistant.metrics.user_turns, 2);
    assertExchangeable(out);
  });
});
