/**
 * Interception hooks end to end (kit/intercept.ts, lib/interception/hooks.ts): a task that
 * rewrites a request, one that blocks a bash call, one that stops the rollout on a
 * response, with a scripted loopback model; and the `bash-interception` taskset (Python's
 * environment) with the oracle. Every trace is checked against Python's models by
 * evalInProcess.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { type FakeReply, startFakeOpenAI } from "./fakes/openai_server.ts";
import { evalInProcess } from "./_eval.ts";
import { at } from "./_assert.ts";
import { lastMessages, numTurns } from "../kit/trace/derived.ts";
import type { Trace } from "../kit/trace/types.ts";
import { taskHash } from "../kit/tasks/hash.ts";
import { realPythonUnavailable, runRealPython } from "./_python_v1.ts";
import { PROMPTS } from "../plugins/tasksets/bash-interception/mod.ts";

const FIXTURE = join(import.meta.dirname!, "fixtures", "intercept", "hooks_taskset.ts");
type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

const byIdx = (traces: Trace[], idx: number) =>
  traces.find((t) => t.task.data.idx === idx) ?? assert.fail(`no trace of task ${idx}`);

const PYTHON_WHY = realPythonUnavailable();
const PYTHON_SKIP: string | false = PYTHON_WHY ? `the real Python v1 models: ${PYTHON_WHY}` : false;

describe("interception hooks with a scripted model", () => {
  let fake: Fake;
  let traces: Trace[] = [];
  let lines: string[] = [];
  const script = (body: Record<string, unknown>): FakeReply | string => {
    const msgs = body.messages as { role: string; content: unknown }[];
    const user = JSON.stringify(msgs.filter((m) => m.role === "user"));
    if (user.includes("Delete")) {
      return msgs.some((m) => m.role === "tool")
        ? "could not delete"
        : { tool_calls: [{ name: "bash", arguments: { command: "rm keep.txt" } }] };
    }
    if (user.includes("Say STOP")) return "STOP now";
    if (user.includes("Print the word")) {
      return msgs.some((m) => m.role === "tool")
        ? "printed"
        : { tool_calls: [{ name: "bash", arguments: { command: "echo forbidden" } }] };
    }
    return `you said: ${user}`;
  };
  before(async () => {
    process.env.VF_TEST_KEY = "sk-hooks-secret";
    fake = await startFakeOpenAI({ apiKey: "sk-hooks-secret", script: (b) => script(b) });
    const { episodes, lines: written } = await evalInProcess([
      FIXTURE,
      "-m",
      "m",
      "--client.base-url",
      fake.url,
      "--client.api-key-var",
      "VF_TEST_KEY",
    ]);
    traces = episodes.map((e) => at(e.traces, 0));
    lines = written;
  });
  after(() => fake.close());

  it("sends the rewritten request upstream and records it", () => {
    const t = byIdx(traces, 0);
    assert.deepEqual(t.errors, []);
    assert.deepEqual(t.request_rewrites, [{ handler: "redact" }]);
    const sent = fake.requests.map((r) => JSON.stringify(r.body.messages));
    assert.ok(sent.some((s) => s.includes("REDACTED")));
    assert.ok(sent.every((s) => !s.includes("SECRET")), "the original prompt went upstream");
    const user = lastMessages(t).find((m) => m.role === "user");
    assert.equal(user?.content, "My password is REDACTED. Say hi.");
    assert.equal(t.stop_condition, "agent_completed");
  });

  it("blocks a tool call: the agent gets the hook's result and the command never runs", () => {
    const t = byIdx(traces, 1);
    assert.deepEqual(t.errors, []);
    assert.deepEqual(t.request_rewrites, [{ handler: "block_rm" }]);
    const tool = lastMessages(t).find((m) => m.role === "tool");
    assert.equal(tool?.content, "blocked: no rm");
    assert.equal(t.rewards.kept?.score, 1, "keep.txt was deleted");
    assert.equal(numTurns(t), 2);
    assert.equal(t.stop_condition, "agent_completed");
  });

  it("stops the rollout on a response: the turn is recorded, the stop names the hook", () => {
    const t = byIdx(traces, 2);
    assert.deepEqual(t.errors, []);
    assert.equal(t.ok, true);
    assert.equal(t.stop_condition, "said_stop");
    assert.equal(numTurns(t), 1);
    assert.equal(lastMessages(t).at(-1)?.content, "STOP now");
    assert.deepEqual(t.response_rewrites, []);
  });
  it("stops the rollout on a tool result: it is recorded, the model never sees it", () => {
    const t = byIdx(traces, 3);
    assert.deepEqual(t.errors, []);
    assert.equal(t.stop_condition, "leaked");
    assert.equal(numTurns(t), 1);
    const last = t.nodes.at(-1)!;
    assert.equal(last.message.role, "tool");
    assert.match(String(last.message.content), /forbidden/);
    assert.equal(last.sampled, false);
    const seen = fake.requests.map((r) => JSON.stringify(r.body.messages))
      .filter((m) => m.includes("Print the word"));
    assert.equal(seen.length, 1);
    assert.ok(!seen[0]!.includes('"role":"tool"'), "the model saw the tool result");
  });
  it("records the rewrite in the trace line as Python names it", () => {
    assert.ok(lines.some((l) => l.includes('"request_rewrites":[{"handler":"redact"}]')));
  });

  it("writes lines Python's WireEpisode takes, rewrites and boundary stops included", {
    skip: PYTHON_SKIP,
  }, () => {
    const answers = runRealPython(lines.map((l) => ({ kind: "episode", value: JSON.parse(l) })));
    assert.equal(answers.length, lines.length);
    for (const a of answers) assert.ok(a.ok, a.error);
  });

  it("fails the rollout with a TaskError when a hook throws", () => {
    const t = byIdx(traces, 4);
    assert.equal(t.ok, false);
    assert.equal(t.errors[0]?.type, "TaskError");
    assert.match(t.errors[0]?.message ?? "", /response interception failed: Error: the hook broke/);
  });
});

describe("the bash-interception taskset", () => {
  it("hashes its tasks as Python's TaskData(idx, prompt) rows", { skip: PYTHON_SKIP }, () => {
    const rows = PROMPTS.map((prompt, idx) => ({ idx, prompt }));
    const answers = runRealPython(rows.map((value) => ({ kind: "task_data_key", value })));
    rows.forEach((row, i) => assert.equal(taskHash(row), at(answers, i).key));
  });

  it("stops before the touch and blocks the git call, with the oracle", async () => {
    const { episodes } = await evalInProcess(["bash-interception", "-m", "oracle"]);
    const traces = episodes.map((e) => at(e.traces, 0));
    const stop = byIdx(traces, 0);
    assert.deepEqual(stop.errors, []);
    assert.equal(stop.stop_condition, "stop_bash");
    assert.equal(stop.rewards.rewritten?.score, 1);
    const git = byIdx(traces, 1);
    assert.deepEqual(git.errors, []);
    assert.deepEqual(git.request_rewrites, [{ handler: "rewrite_git" }]);
    assert.equal(git.rewards.rewritten?.score, 1);
    assert.equal(git.task.type, "BashInterceptionTask");
  });
});
