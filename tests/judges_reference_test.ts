import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { type FakeReply, startFakeOpenAI } from "./fakes/openai_server.ts";
import {
  closeJudgeInterception,
  configured,
  fullTrace,
  JUDGE_KEY,
  JUDGE_KEY_VAR,
  judgeEntry,
  judgeInterception,
  openJudgeInterception,
  promptOf,
  qaTrace,
  scoreWith,
} from "./fixtures/judges/judge_helpers.ts";
import { hookContext } from "./_trace_helpers.ts";
import reference, { referenceJudgeConfig } from "../plugins/judges/reference/mod.ts";
import rubric, { rubricJudgeConfig } from "../plugins/judges/rubric/mod.ts";
import { judgeVerdict, parseJudgeChoice } from "../kit/scoring/judge_choice.ts";
import { fence, renderTemplate } from "../kit/scoring/template.ts";
import { finalReply, transcript } from "../kit/scoring/transcript.ts";
import { configureJudge } from "../lib/rollout/judge_context.ts";
import { judgeRewardKey, scoreTrace } from "../lib/rollout/scoring.ts";
import { createProviderClient } from "../lib/clients/provider_client.ts";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { ConfigError, InputError, TaskError } from "../kit/errors.ts";
import { loadPlugin } from "../lib/plugins/load.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import { at } from "./_assert.ts";

const RUBRIC = join(import.meta.dirname!, "fixtures", "judges", "rubric.toml");

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

/** The Python tests' fake judge: "yes" iff the response block mentions Paris. */
function yesIfParis(prompt: string): string {
  return prompt.split("Response:").pop()!.includes("Paris") ? "yes" : "no";
}

describe("parseJudgeChoice()", () => {
  const yn = ["yes", "no"];
  const cases: [string, readonly string[], string | null][] = [
    ["yes", yn, "yes"],
    ["Final answer: NO", yn, "no"],
    ["gibberish", yn, null],
    ["", yn, null],
    ["Final Judgment: B because it is a better answer", ["A", "B"], "B"],
    ["<think>it is clearly yes", yn, null],
    ["<think>maybe no</think>\nyes", yn, "yes"],
    ["<think>a</think> no <think>b</think> yes", yn, "yes"],
    ["No wait, yes. Actually no.", yn, "no"],
    ["I lean no, but \\boxed{yes}", yn, "yes"],
    ["\\boxed{no}\nFINAL VERDICT: yes", yn, "yes"],
    ["FINAL ANSWER: \\boxed{no} (not yes)", yn, "no"],
    ["Verdict - no\nthough yes was tempting", yn, "no"],
    ["JUDGMENT IS: yes\nno doubt", yn, "yes"],
    ["Answer: yes\nVerdict: no", yn, "no"],
    ["yesterday the answer was unknown", yn, null],
    ["the winner is b", ["A", "B"], "B"],
    ["Final Judgment: A\nFinal Judgment: B", ["A", "B"], "B"],
  ];
  for (const [text, choices, want] of cases) {
    it(`${JSON.stringify(text)} -> ${want}`, () => {
      assert.equal(parseJudgeChoice(text, choices), want);
    });
  }

  it("judgeVerdict throws a TaskError naming the labels", () => {
    assert.equal(judgeVerdict("Final answer: NO", ["yes", "no"]), "no");
    assert.throws(
      () => judgeVerdict("gibberish", ["yes", "no"]),
      (e) => e instanceof TaskError && /no yes\/no verdict: "gibberish"/.test(e.message),
    );
    assert.throws(() => judgeVerdict("gibberish", ["A", "B"]), /no A\/B verdict/);
  });
});

describe("renderTemplate()", () => {
  it("fills known placeholders in one pass", () => {
    assert.equal(
      renderTemplate("Q:{question} A:{answer} R:{response}", {
        question: "q",
        answer: "a",
        response: "r",
      }),
      "Q:q A:a R:r",
    );
  });

  it("keeps literal braces and unknown placeholders", () => {
    assert.equal(
      renderTemplate('Q: {question} -> reply {"score": N}; {other} work: {response}', {
        question: "Q1",
        response: "R1",
      }),
      'Q: Q1 -> reply {"score": N}; {other} work: R1',
    );
  });

  it("does not re-scan substituted values", () => {
    assert.equal(
      renderTemplate("Q: {question} A: {answer}", {
        question: "quote {answer} verbatim",
        answer: 42,
      }),
      "Q: quote {answer} verbatim A: 42",
    );
  });

  it("fences text one backtick longer than any run inside it", () => {
    assert.equal(fence("x"), "```\nx\n```");
    assert.equal(fence("a ```` b"), "`````\na ```` b\n`````");
  });
});

describe("transcript and views", () => {
  it("renders the last branch as role blocks without reasoning", () => {
    const t = transcript(fullTrace());
    assert.ok(t.includes("[user]\nCapital of France?"), t);
    assert.ok(
      t.includes('[assistant]\nLet me look it up.\n[tool_call search({"q": "france"})]'),
      t,
    );
    assert.ok(t.includes("[tool search]\nTOOL RESULT: Paris is the capital."), t);
    assert.ok(t.endsWith("[assistant]\nIt is Paris."), t);
    assert.ok(!t.includes("SECRET REASONING"));
    assert.equal(t.split("\n\n").length, 4);
  });

  it("the final reply is the last sampled assistant message, trimmed", () => {
    assert.equal(finalReply(fullTrace()), "It is Paris.");
    assert.equal(finalReply(qaTrace("  spaced \n")), "spaced");
  });
});

describe("judge config", () => {
  it("resolves the built-ins and narrows each entry to its plugin", async () => {
    assert.equal((await loadPlugin("judge", "reference")).id, "reference");
    assert.equal((await loadPlugin("judge", "rubric")).id, "rubric");
    const { config, plugins } = await loadEvalConfig([
      "echo",
      "-m",
      "x",
      "--env.taskset.task.judges",
      JSON.stringify([
        { id: "reference", answer_field: "gold", weight: 0.5 },
        { id: "rubric", path: RUBRIC, name: "quality" },
      ]),
    ]);
    const ref = at(config.env.taskset.task.judges, 0);
    const rub = at(config.env.taskset.task.judges, 1);
    assert.deepEqual(plugins.judges.map((p) => p.id), ["reference", "rubric"]);
    assert.equal(ref.answer_field, "gold");
    assert.equal(ref.view, "last_reply");
    assert.equal(ref.weight, 0.5);
    assert.equal(rub.name, "quality");
    assert.equal(rub.view, "full_trace");
    assert.equal(rub.structured_output, false);
  });

  it("has the reference defaults", () => {
    const d = referenceJudgeConfig.parse({});
    assert.deepEqual(d, {
      answer_field: "answer",
      question_field: "",
      view: "last_reply",
      choices: ["yes", "no"],
    });
    assert.equal(rubricJudgeConfig.parse({ path: "x.toml" }).view, "full_trace");
    const e = judgeEntry(reference, {});
    assert.equal(e.weight, 1);
    assert.equal(e.model, null);
    assert.equal(e.base_url, null);
  });

  async function problems(judges: unknown): Promise<string> {
    try {
      await loadEvalConfig([
        "echo",
        "-m",
        "x",
        "--env.taskset.task.judges",
        JSON.stringify(judges),
      ]);
    } catch (e) {
      assert.ok(e instanceof ConfigError, String(e));
      return e.message;
    }
    assert.fail("the config was accepted");
  }

  it("refuses an entry without an id, a rubric without a path, non-finite weights", async () => {
    assert.match(await problems([{ weight: 1 }]), /needs an `id`/);
    assert.match(await problems([{ id: "rubric" }]), /judges\.0\.path/);
    assert.throws(() => judgeEntry(rubric, { path: RUBRIC, weight: Infinity }));
  });

  it("refuses judges that share a reward key, naming both", async () => {
    assert.match(
      await problems([{ id: "reference" }, { id: "reference" }]),
      /judges 0 and 1 share a reward key "reference"/,
    );
    assert.match(
      await problems([{ id: "reference" }, { id: "acme/reference@1.0" }]),
      /judges 0 and 1 share a reward key "reference"/,
    );
    const { config } = await loadEvalConfig([
      "echo",
      "-m",
      "x",
      "--env.taskset.task.judges",
      '[{"id":"reference","name":"strict"},{"id":"reference","name":"lenient"}]',
    ]);
    assert.deepEqual(config.env.taskset.task.judges.map((j) => j.name), ["strict", "lenient"]);
  });

  it("refuses degenerate verdict labels", () => {
    for (const choices of [["yes", "yes"], ["A", "a"], ["", "no"]]) {
      assert.throws(() => judgeEntry(reference, { choices }), /two distinct, non-empty/);
    }
  });

  it("derives the reward key: name, else the id's package name, else the plugin's id", () => {
    assert.equal(judgeRewardKey({ name: "", id: "reference" }), "reference");
    assert.equal(judgeRewardKey({ name: "", id: "org/my-judge@1.0.0" }), "my-judge");
    assert.equal(judgeRewardKey({ name: "gold", id: "reference" }), "gold");
    assert.equal(
      judgeRewardKey({ name: "", id: "./judges/quality.ts" }, { id: "my_quality" }),
      "my_quality",
    );
  });
});

describe("reference judge against a fake judge model", () => {
  let fake: Fake;
  let other: Fake;
  let script: (prompt: string) => FakeReply | string = yesIfParis;
  before(async () => {
    process.env[JUDGE_KEY_VAR] = JUDGE_KEY;
    fake = await startFakeOpenAI({
      apiKey: JUDGE_KEY,
      script: (body) => script(promptOf(body)),
    });
    other = await startFakeOpenAI({ script: () => "yes" });
    await openJudgeInterception();
  });
  after(async () => {
    await fake.close();
    await other.close();
    await closeJudgeInterception();
  });
  const score = (raw: Record<string, unknown>, trace = qaTrace()) =>
    scoreWith(reference, raw, fake.url, trace);

  it("scores yes 1 and records the call", async () => {
    script = yesIfParis;
    const n = fake.requests.length;
    const trace = qaTrace();
    assert.equal(await score({}, trace), 1);
    assert.equal(fake.requests.length, n + 1);
    const req = at(fake.requests, n);
    assert.equal(req.body.model, "run-model");
    assert.equal(req.body.messages.length, 1);
    assert.equal(req.body.messages[0].role, "user");
    const prompt = promptOf(req.body);
    assert.ok(prompt.includes("```\nCapital of France?\n```"), prompt);
    assert.ok(prompt.includes("```\nParis\n```"), prompt);
    assert.ok(prompt.endsWith('Respond either "yes" or "no" only.\n'), prompt);
    const records = trace.info.judge as Record<string, unknown>[];
    assert.equal(records.length, 1);
    assert.equal(at(records, 0).judge, "reference");
    assert.equal(at(records, 0).model, "run-model");
    assert.equal(at(records, 0).text, "yes");
    assert.equal(at(records, 0).parsed, 1);
    assert.ok((at(records, 0).usage as { prompt_tokens: number }).prompt_tokens > 0);
    assert.equal(trace.extra_usage.length, 1);
    assert.equal(at(trace.extra_usage, 0).source, "judge:reference");
  });

  it("scores a wrong answer 0", async () => {
    assert.equal(await score({}, qaTrace("It is Rome.")), 0);
  });

  it("refuses a task without the answer field, without a call", async () => {
    const n = fake.requests.length;
    await assert.rejects(
      score({ answer_field: "gold" }),
      (e) => e instanceof TaskError && /no 'gold' field/.test(e.message),
    );
    assert.equal(fake.requests.length, n);
  });

  it("renders a messages prompt as text", async () => {
    const trace = qaTrace();
    trace.task.data.prompt = [{
      role: "user",
      content: [{ type: "text", text: "Capital of France?" }],
    }];
    assert.equal(await score({}, trace), 1);
    assert.ok(promptOf(fake.requests.at(-1)!.body).includes("Capital of France?"));
  });

  it("question_field replaces the prompt; a typo is an error", async () => {
    const trace = qaTrace("It is Paris.", "Paris", { question: "Capital of France?" });
    trace.task.data.prompt = "SYSTEM INSTRUCTIONS\n\nQuestion: Capital of France?";
    await score({ question_field: "question" }, trace);
    const prompt = promptOf(fake.requests.at(-1)!.body);
    assert.ok(prompt.includes("Capital of France?"));
    assert.ok(!prompt.includes("SYSTEM INSTRUCTIONS"));
    await assert.rejects(score({ question_field: "typo" }, trace), /no 'typo' field/);
  });

  it("shows only the final reply by default and the transcript with full_trace", async () => {
    await score({}, fullTrace());
    assert.ok(!promptOf(fake.requests.at(-1)!.body).includes("TOOL RESULT"));
    await score({ view: "full_trace" }, fullTrace());
    const prompt = promptOf(fake.requests.at(-1)!.body);
    assert.ok(prompt.includes("TOOL RESULT: Paris is the capital."));
    assert.ok(!prompt.includes("SECRET REASONING"));
  });

  it("uses a prompt file verbatim; a missing one fails before any call", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-judge-"));
    const file = join(dir, "judge.txt");
    writeFileSync(file, "Q:{question} A:{answer} R:{response}");
    assert.equal(await score({ prompt: file }), 1);
    assert.equal(
      promptOf(fake.requests.at(-1)!.body),
      "Q:Capital of France? A:Paris R:It is Paris.",
    );
    assert.throws(
      () => configured(reference, { prompt: join(dir, "missing.txt") }, fake.url),
      (e) => e instanceof InputError && e.code === "judge_prompt_unreadable",
    );
  });

  it("scores a blank reply 0 without a call", async () => {
    const n = fake.requests.length;
    const trace = qaTrace("  ");
    assert.equal(await score({}, trace), 0);
    assert.equal(fake.requests.length, n);
    assert.equal(trace.info.judge, undefined);
  });

  it("shows list answers one per line", async () => {
    await score(
      { answer_field: "aliases" },
      qaTrace("It is Paris.", "x", { aliases: ["Paris", "Lutetia"] }),
    );
    assert.ok(promptOf(fake.requests.at(-1)!.body).includes("Paris\nLutetia"));
  });

  it("asks for configured labels and refuses a verdict outside them", async () => {
    script = (p) => (p.includes("Paris\n```\n\nResponse") ? "Final verdict: A" : "B");
    assert.equal(await score({ choices: ["A", "B"] }), 1);
    assert.ok(promptOf(fake.requests.at(-1)!.body).includes('Respond either "A" or "B" only.'));
    script = () => "yes";
    const trace = qaTrace();
    await assert.rejects(score({ choices: ["A", "B"] }, trace), /no A\/B verdict/);
    const records = trace.info.judge as Record<string, unknown>[];
    assert.equal(records.length, 1, "the billed call is recorded");
    assert.equal(at(records, 0).parsed, null);
    assert.equal(trace.extra_usage.length, 1);
    script = yesIfParis;
  });

  it("falls back to the run's client and model; an own endpoint, model and sampling win", async () => {
    const n = other.requests.length;
    const trace = qaTrace();
    assert.equal(
      await scoreWith(
        reference,
        {
          base_url: other.url,
          model: "judge-model",
          sampling: { temperature: 0 },
          headers: { "x-judge": "1" },
        },
        fake.url,
        trace,
      ),
      1,
    );
    assert.equal(other.requests.length, n + 1);
    const req = at(other.requests, n);
    assert.equal(req.body.model, "judge-model");
    assert.equal(req.body.temperature, 0);
    assert.equal(req.headers["x-judge"], "1");
    assert.equal(req.headers.authorization, `Bearer ${JUDGE_KEY}`, "the run's key variable");
    assert.equal(at(trace.info.judge as { model: string }[], 0).model, "judge-model");
  });

  it("refuses to judge with the oracle model", async () => {
    const j = configureJudge(reference, judgeEntry(reference, {}), {
      client: { base_url: fake.url, api_key_var: JUDGE_KEY_VAR, headers: {} },
      model: "oracle",
      runClient: createProviderClient({ baseUrl: fake.url }),
      interception: judgeInterception(),
    });
    const trace = qaTrace();
    await assert.rejects(
      j.plugin.score(j.context(hookContext(trace.task.data as TaskData, trace))),
      /cannot call the oracle model/,
    );
  });

  it("through scoreTrace: blank scores 0 with no error; gibberish is a TaskError with a null seed", async () => {
    script = () => "as an AI language model I cannot grade this";
    const judge = configured(reference, {}, fake.url);
    const blank = qaTrace("");
    await scoreTrace(blank, hookContext(blank.task.data as TaskData, blank), {
      metrics: [],
      rewards: [],
      judges: [judge],
    });
    assert.deepEqual(blank.rewards, { reference: { score: 0, weight: 1 } });
    assert.deepEqual(blank.errors, []);
    const trace = qaTrace();
    await scoreTrace(trace, hookContext(trace.task.data as TaskData, trace), {
      metrics: [],
      rewards: [],
      judges: [judge],
    });
    assert.deepEqual(trace.rewards, { reference: null });
    assert.equal(trace.errors.length, 1);
    assert.equal(at(trace.errors, 0).type, "TaskError");
    assert.match(
      at(trace.errors, 0).message,
      /^judge 'reference': judge returned no yes\/no verdict/,
    );
    assert.equal((trace.info.judge as unknown[]).length, 1);
    script = yesIfParis;
  });
});
