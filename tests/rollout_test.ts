import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { evalInProcess } from "./_eval.ts";
import { type FakeReply, startFakeOpenAI } from "./fakes/openai_server.ts";
import { initialMessages, retryDelayMs } from "../lib/rollout/rollout.ts";
import { TaskError } from "../kit/errors.ts";
import { at } from "./_assert.ts";

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

function jsonl(rows: Record<string, unknown>[]): string {
  const dir = mkdtempSync(join(tmpdir(), "vf-rollout-"));
  const path = join(dir, "tasks.jsonl");
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return path;
}

describe("rollout lifecycle", () => {
  let fake: Fake;
  let script: (i: number) => FakeReply | string = () => "ok";
  before(async () => {
    fake = await startFakeOpenAI({ apiKey: "k-rollout", script: (_b, i) => script(i) });
    process.env.VF_ROLLOUT_KEY = "k-rollout";
  });
  after(() => fake.close());
  const client = () => ["--client.base-url", fake.url, "--client.api-key-var", "VF_ROLLOUT_KEY"];

  it("ends an agent past its budget with the agent-timeout HarnessError; agent config beats task data", async () => {
    const path = jsonl([{ prompt: "wait", answer: "x", timeout: { agent: 0.3 } }]);
    const sleeper = [
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      '["sleep","5"]',
    ];
    const byTask = await evalInProcess([
      "jsonl",
      "--env.taskset.path",
      path,
      "-m",
      "m",
      ...client(),
      ...sleeper,
    ]);
    const t1 = at(at(byTask.episodes, 0).traces, 0);
    assert.equal(t1.ok, false);
    assert.equal(at(t1.errors, 0).type, "HarnessError");
    assert.equal(at(t1.errors, 0).message, "agent timeout: rollout exceeded its 0.3s budget");
    const byAgent = await evalInProcess([
      "jsonl",
      "--env.taskset.path",
      path,
      "-m",
      "m",
      ...client(),
      ...sleeper,
      "--env.agent.timeout.rollout",
      "0.5",
    ]);
    assert.equal(
      at(at(at(byAgent.episodes, 0).traces, 0).errors, 0).message,
      "agent timeout: rollout exceeded its 0.5s budget",
    );
    const span = at(at(byAgent.episodes, 0).traces, 0).timing.agent;
    assert.ok(span.end! - span.start! < 4, "the program was not cut at the budget");
  });

  it("leaves no command-harness messages file on the host when the agent is cut off at its budget", async () => {
    const token = `prompt-${randomUUID()}`; // only this test's file can hold it
    const path = jsonl([{ prompt: token, answer: "x" }]);
    const r = await evalInProcess([
      "jsonl",
      "--env.taskset.path",
      path,
      "-m",
      "m",
      ...client(),
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      '["sleep","5"]',
      "--env.agent.timeout.rollout",
      "0.3",
    ]);
    assert.equal(at(at(at(r.episodes, 0).traces, 0).errors, 0).type, "HarnessError");
    // the file goes next to the local runtime's work directory, in the temp folder
    const left = [...new Set(["/tmp", tmpdir()])].flatMap((root) =>
      readdirSync(root).filter((d) => d.startsWith("vf-command-")).filter((d) => {
        try {
          return readFileSync(join(root, d, "messages.json"), "utf8").includes(token);
        } catch {
          return false; // another test's, removed meanwhile
        }
      })
    );
    assert.deepEqual(left, [], "the messages file (the task's prompt) was left behind");
  });

  it("retries a whole rollout on an included error type and keeps every attempt's errors", async () => {
    const path = jsonl([{ prompt: "hi", answer: "ok" }]);
    // the null harness retries a 500 twice itself; three 500s end the first attempt
    const first = fake.requests.length;
    script = (i) => i - first < 3 ? { status: 500, error: "flaky" } : "ok";
    const { episodes } = await evalInProcess([
      "jsonl",
      "--env.taskset.path",
      path,
      "-m",
      "m",
      ...client(),
      "--env.agent.harness.id",
      "null",
      "--env.agent.retries.max-retries",
      "2",
      "--env.agent.retries.include",
      "ProviderError",
      "--env.taskset.task.judges",
      '[{"id":"match"}]',
    ]);
    const t = at(at(episodes, 0).traces, 0);
    assert.equal(t.info.attempts, 2);
    assert.deepEqual(t.errors.map((e) => [e.type, e.status_code]), [["ProviderError", 500]]);
    assert.equal(t.rewards.match?.score, 1);
  });

  it("does not retry an excluded error type", async () => {
    const path = jsonl([{ prompt: "hi", answer: "ok" }]);
    script = () => ({ status: 500, error: "down" });
    const before = fake.requests.length;
    const { episodes } = await evalInProcess([
      "jsonl",
      "--env.taskset.path",
      path,
      "-m",
      "m",
      ...client(),
      "--env.agent.harness.id",
      "null",
      "--env.agent.retries.max-retries",
      "3",
      "--env.agent.retries.exclude",
      "ProviderError",
    ]);
    const t = at(at(episodes, 0).traces, 0);
    assert.equal(t.errors.length, 1);
    assert.equal(t.info.attempts, undefined);
    assert.ok(fake.requests.length - before <= 3, "the harness's own retries only");
  });

  it("records a prompt-less task as a TaskError without calling the model", async () => {
    const before = fake.requests.length;
    const promptless = join(import.meta.dirname!, "fixtures", "plugins", "promptless_taskset.ts");
    const { episodes } = await evalInProcess([promptless, "-m", "m", ...client()]);
    const t = at(at(episodes, 0).traces, 0);
    assert.equal(at(t.errors, 0).type, "TaskError");
    assert.match(at(t.errors, 0).message, /no prompt/);
    assert.equal(t.stop_condition, "error");
    assert.equal(fake.requests.length, before);
  });
});

describe("retryDelayMs()", () => {
  it("is min(0.5·2^attempt, 30) s jittered by U(0.5, 1.5)", () => {
    assert.equal(retryDelayMs(0, () => 0), 250);
    assert.equal(retryDelayMs(0, () => 1), 750);
    assert.equal(retryDelayMs(3, () => 0.5), 4000);
    assert.equal(retryDelayMs(10, () => 0.5), 30000);
  });
});

describe("initialMessages()", () => {
  it("puts the system prompt first, or folds it into a text prompt", () => {
    const task = { prompt: "do it", system_prompt: "be brief" };
    assert.deepEqual(initialMessages(task, true), [
      { role: "system", content: "be brief" },
      { role: "user", content: "do it" },
    ]);
    assert.deepEqual(initialMessages(task, false), [{
      role: "user",
      content: "be brief\n\ndo it",
    }]);
    assert.throws(
      () =>
        initialMessages({ prompt: [{ role: "user", content: "x" }], system_prompt: "s" }, false),
      TaskError,
    );
  });
});

describe("plugged functions", () => {
  it("refuse the run before any rollout when their module cannot load", async () => {
    const missing = join(mkdtempSync(join(tmpdir(), "vf-plug-")), "nope.ts");
    await assert.rejects(
      evalInProcess([
        "echo",
        "-m",
        "oracle",
        "--env.taskset.task.rewards",
        JSON.stringify({ extra: { fn: `${missing}:score` } }),
      ]),
      (e: unknown) => {
        assert.ok(e instanceof Error && (e as { exitCode?: number }).exitCode === 2, String(e));
        assert.match((e as Error).message, /nope\.ts/);
        return true;
      },
    );
  });
});
