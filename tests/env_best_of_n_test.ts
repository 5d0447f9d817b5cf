/**
 * The best-of-n env end to end against a scripted loopback model: siblings, their
 * `best` and `pass_at_n` metrics, Python v1's models over the outputs, and resume.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { evalInProcess } from "./_eval.ts";
import { assertExchangeable } from "./_python_v1_exchange.ts";
import { prepare, traceLines } from "./_run.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { runEval } from "../lib/run/run_eval.ts";
import { traceReward } from "../kit/trace/derived.ts";
import type { Episode } from "../kit/trace/types.ts";

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

describe("best-of-n", () => {
  let fake: Fake;
  /** Whether model call `index` answers right (the others answer with a wrong text). */
  let right: (index: number) => boolean;
  before(async () => {
    process.env.VF_BON_KEY = "sk-best-of-n";
    fake = await startFakeOpenAI({
      script: (body, index) => {
        const messages = body.messages as { role: string; content: string }[];
        const prompt = messages.filter((m) => m.role === "user").at(-1)!.content;
        const text = right(index) ? Array.from(prompt).reverse().join("") : "not it";
        return `<reversed_text>${text}</reversed_text>`;
      },
    });
  });
  after(async () => await fake.close());

  /** reverse-text, one episode at a time, each attempt one model call (null harness). */
  const args = (extra: string[]) => [
    "reverse-text",
    "-n",
    "2",
    "-c",
    "1",
    "-m",
    "m",
    "--env.id",
    "best-of-n",
    "--env.agent.harness.id",
    "null",
    "--client.base-url",
    fake.url,
    "--client.api-key-var",
    "VF_BON_KEY",
    ...extra,
  ];

  it("with n=4 marks the one right sibling best, and pass_at_n on every sibling", async () => {
    const before = fake.requests.length;
    right = (i) => (i - before) % 4 === 2; // the third attempt of each episode
    const out = await evalInProcess(args(["--env.n", "4"]));
    assert.equal(fake.requests.length - before, 8);
    assert.equal(out.episodes.length, 2);
    for (const ep of out.episodes) {
      assert.equal(ep.env.id, "best-of-n+reverse-text");
      assert.equal(ep.ok, true, JSON.stringify(ep.errors));
      assert.equal(ep.traces.length, 4);
      assert.deepEqual(ep.traces.map((t) => t.agent.name), ["agent", "agent", "agent", "agent"]);
      assert.deepEqual(ep.traces.map((t) => t.rewards.lcs?.score === 1), [
        false,
        false,
        true,
        false,
      ]);
      assert.deepEqual(ep.traces.map((t) => t.metrics.best), [0, 0, 1, 0]);
      assert.deepEqual(ep.traces.map((t) => t.metrics.pass_at_n), [1, 1, 1, 1]);
    }
    const config = JSON.parse(readFileSync(join(out.runDir, "configs", "eval.json"), "utf8"));
    assert.equal(config.env.id, "best-of-n");
    assert.equal(config.env.n, 4);
    assert.equal(config.env.threshold, 1);
    assert.equal(out.summary.counts.episodes, 2);
    assert.equal(out.summary.counts.traces, 8);
    assert.equal(out.summary.metrics.best, 0.25);
    assertExchangeable(out);
  });

  it("ties share best, and pass_at_n is 0 when no sibling reaches the threshold", async () => {
    right = () => false;
    const out = await evalInProcess(args(["--env.n", "3", "--env.threshold", "0.9"]));
    for (const ep of out.episodes) {
      assert.equal(ep.traces.length, 3);
      const rewards = ep.traces.map(traceReward);
      assert.ok(rewards.every((r) => r === rewards[0] && r < 0.9), String(rewards));
      assert.deepEqual(ep.traces.map((t) => t.metrics.best), [1, 1, 1]);
      assert.deepEqual(ep.traces.map((t) => t.metrics.pass_at_n), [0, 0, 0]);
    }
    assertExchangeable(out);
  });

  it("a resume counts episodes, not traces: it reruns only the missing episode", async () => {
    right = (i) => i % 2 === 0;
    const out = await evalInProcess(args(["--env.n", "4"]));
    const [first] = out.lines;
    writeFileSync(join(out.runDir, "traces.jsonl"), first + "\n");
    const p = await prepare(["--resume", out.runDir], out.runDir);
    const before = fake.requests.length;
    await runEval(p.loaded, { runDir: p.runDir, cwd: out.runDir });
    assert.equal(fake.requests.length - before, 4, "one episode of four attempts is rerun");
    const lines = traceLines(out.runDir);
    assert.equal(lines.length, 2);
    assert.equal(lines[0], first);
    const episodes = lines.map((l) => JSON.parse(l) as Episode);
    assert.deepEqual(episodes.map((e) => e.traces.length), [4, 4]);
    assert.deepEqual(
      episodes.map((e) => e.task.hash).sort(),
      out.episodes.map((e) => e.task.hash).sort(),
    );
    assertExchangeable({ runDir: out.runDir, episodes });
  });

  it("refuses a bad env.n, naming the flag", async () => {
    await assert.rejects(
      evalInProcess(args(["--env.n", "0"])),
      (e: unknown) => e instanceof Error && /--env\.n/.test(e.message),
    );
  });
});
