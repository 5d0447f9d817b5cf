import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { evalInProcess } from "./_eval.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { at } from "./_assert.ts";
import type { ModelCall } from "../kit/trace/types.ts";

const ROOT = join(import.meta.dirname!, "..");
const FIXTURES = join(import.meta.dirname!, "fixtures", "judges");
const KEY_VAR = "VF_E2E_JUDGE_KEY";
const KEY = "k-e2e-judge";

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

/** The scripted judge: `always_yes` -> yes, `effort` -> some (0.5), anything else -> no. */
function verdicts(prompt: string): string {
  const answers: Record<string, string> = { always_yes: "yes", effort: "some" };
  const v = [...prompt.matchAll(/^- ([^:\n]+): /gm)].map(([, name = ""]) => ({
    name,
    reason: "scripted",
    verdict: answers[name] ?? "no",
  }));
  return JSON.stringify({ verdicts: v });
}

describe("the demo config with a rubric judge, against a scripted judge model", () => {
  let judge: Fake;
  before(async () => {
    process.env[KEY_VAR] = KEY;
    judge = await startFakeOpenAI({
      apiKey: KEY,
      script: (body) => verdicts(body.messages[0].content),
    });
  });
  after(() => judge.close());

  it("records rewards.rubric, the per-criterion metrics and info.judge", async () => {
    const demo = readFileSync(join(ROOT, "examples", "quickstart.toml"), "utf8");
    const dir = mkdtempSync(join(tmpdir(), "vf-e2e-judges-"));
    const config = join(dir, "demo_rubric.toml");
    writeFileSync(
      config,
      `${demo}
[[env.taskset.task.judges]]
id = "rubric"
path = ${JSON.stringify(join(FIXTURES, "quickstart_rubric.json"))}
base_url = ${JSON.stringify(judge.url)}
api_key_var = "${KEY_VAR}"
model = "judge-model"
sampling = { temperature = 0 }

[env.taskset.task.rewards.half]
fn = ${JSON.stringify(join(FIXTURES, "scoring_fns.ts"))}
weight = 0.25
`,
    );
    const before = judge.requests.length;
    const { episodes, summary } = await evalInProcess([
      "@",
      config,
      "--model",
      "oracle",
      "-n",
      "3",
    ]);
    assert.equal(episodes.length, 3);
    const traces = episodes.map((e) => at(e.traces, 0));
    const expected = (1 * 1 + 0.5 * 0.5) / 1.5;
    for (const t of traces) {
      assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
      assert.ok(t.rewards.rubric, JSON.stringify(t.rewards));
      assert.ok(Math.abs(t.rewards.rubric.score - expected) < 1e-12, JSON.stringify(t.rewards));
      assert.equal(t.rewards.rubric.weight, 1);
      assert.deepEqual(t.rewards.half, { score: 0.5, weight: 0.25 });
      assert.equal(t.metrics["rubric/always_yes"], 1);
      assert.equal(t.metrics["rubric/effort"], 0.5);
      const records = t.info.judge as Record<string, unknown>[];
      assert.equal(records.length, 1);
      assert.equal(at(records, 0).judge, "rubric");
      assert.equal(at(records, 0).model, "judge-model");
      assert.equal((at(records, 0).parsed as { verdicts: unknown[] }).verdicts.length, 2);
      const usage = t.extra_usage.find((u) => u.source === "judge:rubric");
      assert.ok(usage && usage.prompt_tokens > 0, JSON.stringify(t.extra_usage));
      // the judge's call, recorded by the interception server as the agent's are
      const call = at(records, 0).call as ModelCall;
      assert.equal(call.auxiliary, "judge:rubric");
      assert.equal(call.model, "judge-model");
      assert.equal(call.sampling.temperature, 0);
      assert.match(call.endpoint, /chat\/completions$/);
      assert.equal(call.finish_reason, "stop");
      assert.equal(call.error, null);
      assert.equal(call.usage?.prompt_tokens, usage.prompt_tokens);
      assert.ok(call.time.end >= call.time.start && call.time.start > 0);
      assert.ok(t.calls.length > 0 && t.calls.every((c) => c.auxiliary === undefined));
    }
    const requests = judge.requests.slice(before);
    assert.equal(requests.length, 3, "one judge call per rollout");
    assert.deepEqual(
      requests.map((r) => r.headers["x-session-id"]).sort(),
      traces.map((t) => t.id).sort(),
      "each judge call went through the interception server, in its rollout's session",
    );
    for (const r of requests) {
      assert.equal(r.body.model, "judge-model");
      assert.equal(r.body.temperature, 0);
      const prompt = r.body.messages[0].content as string;
      assert.ok(prompt.includes("[assistant]"), "the rubric grades the transcript");
      assert.ok(prompt.includes("- effort: How much did the agent explain? (answer one of"));
    }
    assert.equal(summary.metrics["rubric/always_yes"], 1);
    assert.ok(summary.rewards.rubric !== undefined, JSON.stringify(summary.rewards));
  });
});
