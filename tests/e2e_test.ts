import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { evalInProcess } from "./_eval.ts";
import { type FakeReply, startFakeOpenAI } from "./fakes/openai_server.ts";
import { numTurns } from "../kit/trace/derived.ts";
import { runCli } from "./_cli.ts";
import { at } from "./_assert.ts";

const FIXTURES = join(import.meta.dirname!, "fixtures");
const OPENAI =
  pathToFileURL(join(import.meta.dirname!, "..", "node_modules", "openai", "index.mjs")).href;

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

function clientFlags(fake: Fake): string[] {
  return ["--client.base-url", fake.url, "--client.api-key-var", "VF_TEST_KEY"];
}

describe("end to end with the oracle model", () => {
  const cases: [string, string[]][] = [
    ["echo", ["echo"]],
    ["reverse-text", ["reverse-text", "-n", "6"]],
    ["addition", ["addition", "-n", "5"]],
    ["jsonl", [
      "jsonl",
      "--env.taskset.path",
      join(FIXTURES, "tasksets", "qa.jsonl"),
      "--env.taskset.task.judges",
      '[{"id":"match"}]',
    ]],
    ["shell-basics", ["shell-basics"]],
  ];
  for (const [name, argv] of cases) {
    it(`scores reward 1 on every ${name} task`, async () => {
      const { episodes, summary } = await evalInProcess([...argv, "-m", "oracle", "-c", "8"]);
      assert.ok(episodes.length > 0);
      for (const ep of episodes) {
        const t = at(ep.traces, 0);
        assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
        assert.equal(t.ok, true);
        assert.equal(t.stop_condition, "agent_completed");
        const weighted = Object.values(t.rewards).filter((r) => r && r.weight > 0);
        assert.ok(weighted.length > 0, `${name}: no weighted reward`);
        for (const r of weighted) {
          assert.equal(
            r!.score,
            1,
            `${name} ${JSON.stringify(t.task.data)}: ${JSON.stringify(t.rewards)}`,
          );
        }
      }
      assert.equal(summary.reward.mean! > 0, true);
      assert.equal(summary.error_fraction, 0);
    });
  }
});

describe("end to end with a scripted model", () => {
  let fake: Fake;
  let script: (body: Record<string, unknown>, i: number) => FakeReply | string = () => "wrong";
  before(async () => {
    process.env.VF_TEST_KEY = "sk-e2e-secret";
    fake = await startFakeOpenAI({
      apiKey: "sk-e2e-secret",
      script: (b, i) => script(b as Record<string, unknown>, i),
    });
  });
  after(() => fake.close());

  it("scores 0 when the model answers wrongly", async () => {
    script = () => "certainly not the answer";
    const { episodes } = await evalInProcess(["echo", "-m", "m1", ...clientFlags(fake)]);
    for (const ep of episodes) {
      assert.equal(ep.ok, true);
      assert.equal(at(ep.traces, 0).rewards.echoed?.score, 0);
    }
  });

  it("records tool nodes, turns, timed calls and agent_completed for a bash rollout", async () => {
    script = (body) => {
      const msgs = body.messages as { role: string }[];
      return msgs.some((m) => m.role === "tool") ? "all done" : {
        tool_calls: [{
          name: "bash",
          arguments: { command: "echo from-the-tool; echo err >&2" },
        }],
      };
    };
    const { episodes, lines } = await evalInProcess([
      "addition",
      "-n",
      "1",
      "-m",
      "org/model-a",
      ...clientFlags(fake),
      "--sampling.temperature",
      "0.3",
    ]);
    const t = at(at(episodes, 0).traces, 0);
    assert.equal(t.stop_condition, "agent_completed");
    assert.equal(numTurns(t), 2);
    const tool = t.nodes.find((n) => n.message.role === "tool");
    assert.ok(tool, "no tool node");
    assert.equal((tool.message as { content: string }).content, "from-the-tool\nerr\n");
    assert.equal(t.calls.length, 2);
    for (const c of t.calls) {
      assert.equal(c.model, "org/model-a");
      assert.equal(c.sampling.temperature, 0.3);
      assert.ok(c.time.end! - c.time.start! > 0, "call duration");
      assert.ok(c.node !== null, "a timed call names its node");
      assert.equal(at(t.nodes, c.node).sampled, true);
    }
    assert.ok(t.tools.some((x) => x.name === "bash"));
    assert.equal(t.agent.config.model, "org/model-a");
    // Python Episode / Trace field names
    const ep = JSON.parse(at(lines, 0));
    assert.deepEqual(Object.keys(ep).sort(), [
      "env",
      "errors",
      "group",
      "id",
      "ok",
      "run",
      "task",
      "traces",
    ]);
    assert.deepEqual(Object.keys(ep.task).sort(), ["data", "hash", "key", "type"]);
    assert.deepEqual(
      Object.keys(ep.traces[0]).sort(),
      [
        "agent",
        "calls",
        "errors",
        "extra_usage",
        "id",
        "info",
        "is_completed",
        "metrics",
        "nodes",
        "ok",
        "request_rewrites",
        "response_rewrites",
        "rewards",
        "stop_condition",
        "task",
        "timing",
        "tools",
        "verifiers",
        "version",
      ],
    );
    assert.deepEqual(Object.keys(ep.traces[0].timing).sort(), [
      "agent",
      "boot",
      "finalize",
      "scoring",
      "setup",
      "start",
    ]);
    assert.equal(ep.run.type, "eval");
    assert.equal(JSON.stringify(ep).includes("sk-e2e-secret"), false);
  });

  it("records a max_turns refusal as the stop condition, without an error", async () => {
    script = () => ({ tool_calls: [{ name: "bash", arguments: { command: "true" } }] });
    const { episodes } = await evalInProcess([
      "addition",
      "-n",
      "1",
      "-m",
      "m",
      ...clientFlags(fake),
      "--env.agent.max-turns",
      "2",
    ]);
    const t = at(at(episodes, 0).traces, 0);
    assert.equal(t.stop_condition, "max_turns");
    assert.equal(t.ok, true);
    assert.equal(numTurns(t), 2);
    assert.ok(t.rewards.correct !== undefined && t.rewards.correct !== null);
  });

  it("turns a provider 500 into a ProviderError with status 500; all errored exits 3", async () => {
    script = () => ({ status: 500, error: "upstream exploded" });
    const { episodes } = await evalInProcess([
      "echo",
      "-n",
      "1",
      "-m",
      "m",
      ...clientFlags(fake),
      "--env.agent.harness.id",
      "null",
    ]);
    const t = at(at(episodes, 0).traces, 0);
    assert.equal(t.ok, false);
    assert.equal(t.stop_condition, "error");
    const e = t.errors.find((x) => x.type === "ProviderError");
    assert.ok(e, JSON.stringify(t.errors));
    assert.equal(e.status_code, 500);
    const out = mkdtempSync(join(tmpdir(), "vf-e2e-cli-"));
    const r = await runCli(
      [
        "eval",
        "echo",
        "-n",
        "2",
        "-m",
        "m",
        ...clientFlags(fake),
        "--env.agent.harness.id",
        "null",
        "-o",
        out,
        "--display",
        "plain",
      ],
      { env: { VF_TEST_KEY: "sk-e2e-secret" } },
    );
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /errors\s+1\.00 {2}\(ProviderError 2\)/);
    assert.match(
      r.stderr,
      /ProviderError ×2 \[HTTP 500\]: provider returned HTTP 500: upstream exploded/,
    );
    assert.equal(r.stderr.includes("sk-e2e-secret") || r.stdout.includes("sk-e2e-secret"), false);
  });

  it("runs a command harness whose program uses the official openai client (JSON, SSE, SDK retry)", async () => {
    script = (
      body,
    ) => (body.stream
      ? "streamed: hello world"
      : `json: ${JSON.stringify((body.messages as { content: string }[]).at(-1)?.content)}`);
    const dir = mkdtempSync(join(tmpdir(), "vf-agent-"));
    const agent = join(dir, "agent.mjs");
    writeFileSync(
      agent,
      `import OpenAI from ${JSON.stringify(OPENAI)};
const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
const messages = [{ role: "user", content: process.env.VF_PROMPT }];
const first = await client.chat.completions.create({ model: process.env.OPENAI_MODEL, messages });
messages.push(first.choices[0].message, { role: "user", content: "again, streaming" });
const stream = await client.chat.completions.create({ model: process.env.OPENAI_MODEL, messages, stream: true });
let text = "";
for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
messages.push({ role: "assistant", content: text });
// an SDK-style retry of the same body must be answered from the record, not sampled again
const body = JSON.stringify({ model: process.env.OPENAI_MODEL, messages });
const headers = { "content-type": "application/json", authorization: "Bearer " + process.env.OPENAI_API_KEY };
const a = await fetch(process.env.OPENAI_BASE_URL + "/chat/completions", { method: "POST", body, headers: { ...headers, "x-stainless-retry-count": "0" } });
const b = await fetch(process.env.OPENAI_BASE_URL + "/chat/completions", { method: "POST", body, headers: { ...headers, "x-stainless-retry-count": "1" } });
const [ja, jb] = [await a.json(), await b.json()];
if (ja.choices[0].message.content !== jb.choices[0].message.content) process.exit(3);
console.log("streamed=" + text);
`,
    );
    const before = fake.requests.length;
    const { episodes } = await evalInProcess([
      "addition",
      "-n",
      "1",
      "-m",
      "m-cmd",
      ...clientFlags(fake),
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(["node", agent]),
    ]);
    const t = at(at(episodes, 0).traces, 0);
    assert.deepEqual(t.errors, []);
    assert.equal(t.stop_condition, "agent_completed");
    assert.equal(fake.requests.length - before, 3, "the retry reached the provider");
    assert.equal(t.calls.length, 3);
    assert.equal(numTurns(t), 3);
    const sampled = t.nodes.filter((n) => n.sampled).map((n) =>
      (n.message as { content: string }).content
    );
    assert.equal(sampled[1], "streamed: hello world");
    assert.match(at(sampled, 0), /^json: /);
    assert.ok(t.calls.every((c) => c.model === "m-cmd"));
  });
});
