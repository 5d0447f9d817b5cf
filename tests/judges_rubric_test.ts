import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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
  openJudgeInterception,
  parisVerdicts,
  promptOf,
  qaTrace,
  scoreWith,
} from "./fixtures/judges/judge_helpers.ts";
import { hookContext } from "./_trace_helpers.ts";
import rubric, {
  type Criterion,
  loadCriteria,
  parseVerdictsText,
  VERDICTS_RESPONSE_FORMAT,
} from "../plugins/judges/rubric/mod.ts";
import reference from "../plugins/judges/reference/mod.ts";
import { InputError, TaskError } from "../kit/errors.ts";
import { type NamedReward, scoreTrace } from "../lib/rollout/scoring.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import { at } from "./_assert.ts";

const RUBRIC = join(import.meta.dirname!, "fixtures", "judges", "rubric.toml");
const RUBRIC_TOML = readFileSync(RUBRIC, "utf8");
const CHOICES_TOML =
  '[[criteria]]\nname = "depth"\ntext = "How thorough?"\nchoices = ["none", "partial", "good"]\n';

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

let dirN = 0;
/** Writes a rubric file `rubric<suffix>` in a fresh directory; returns its path. */
function rubricFile(body: string = RUBRIC_TOML, suffix = ".toml"): string {
  const dir = mkdtempSync(join(tmpdir(), `vf-rubric-${dirN++}-`));
  const path = join(dir, `rubric${suffix}`);
  writeFileSync(path, body);
  return path;
}

const strip = (cs: Criterion[]) => cs.map((c) => ({ ...c }));

describe("rubric files", () => {
  it("reads TOML, JSON (object or bare list) and an uppercase .TOML alike", () => {
    const toml = loadCriteria(rubricFile());
    assert.deepEqual(toml.map((c) => c.name), ["mentions_paris", "is_polite"]);
    assert.deepEqual(toml.map((c) => c.weight), [3, 1]);
    assert.deepEqual(toml.map((c) => c.choices), [["no", "yes"], ["no", "yes"]]);
    const items = strip(toml);
    assert.deepEqual(loadCriteria(rubricFile(JSON.stringify({ criteria: items }), ".json")), toml);
    assert.deepEqual(loadCriteria(rubricFile(JSON.stringify(items), ".json")), toml);
    assert.deepEqual(loadCriteria(rubricFile(RUBRIC_TOML, ".TOML")), toml);
  });

  it("applies weight overrides from the config", () => {
    const cs = loadCriteria(rubricFile(), { mentions_paris: 1 });
    assert.deepEqual(cs.map((c) => c.weight), [1, 1]);
  });

  const bad: [string, () => unknown, RegExp][] = [
    ["an empty file", () => loadCriteria(rubricFile("")), /lists no criteria/],
    ["an empty criteria list", () => loadCriteria(rubricFile("[]", ".json")), /lists no criteria/],
    [
      "duplicate names",
      () =>
        loadCriteria(
          rubricFile(RUBRIC_TOML.replace('name = "is_polite"', 'name = "mentions_paris"')),
        ),
      /duplicate criterion names: \["mentions_paris"\]/,
    ],
    [
      "an override naming no criterion",
      () => loadCriteria(rubricFile(), { typo: 2 }),
      /`weights` overrides name no criterion in '.*': \["typo"\]/,
    ],
    [
      "all-zero weights",
      () => loadCriteria(rubricFile(), { mentions_paris: 0, is_polite: 0 }),
      /no positive criterion weight/,
    ],
    [
      "a negative weight",
      () => loadCriteria(rubricFile(), { mentions_paris: -1 }),
      /negative or non-finite criterion weights: \["mentions_paris"\]/,
    ],
    [
      "a NaN weight",
      () => loadCriteria(rubricFile(), { mentions_paris: NaN }),
      /negative or non-finite/,
    ],
    [
      "an infinite weight",
      () => loadCriteria(rubricFile(), { mentions_paris: Infinity }),
      /negative or non-finite/,
    ],
    [
      "an infinite weight in the file",
      () => loadCriteria(rubricFile(RUBRIC_TOML.replace("weight = 3.0", "weight = inf"))),
      /negative or non-finite/,
    ],
    [
      "a non-finite total",
      () => loadCriteria(rubricFile(), { mentions_paris: 1e308, is_polite: 1e308 }),
      /non-finite total criterion weight/,
    ],
    [
      "a single choice",
      () => loadCriteria(rubricFile('[[criteria]]\nname = "x"\ntext = "t"\nchoices = ["only"]\n')),
      /at least two options/,
    ],
    [
      "duplicate choices",
      () =>
        loadCriteria(rubricFile('[[criteria]]\nname = "x"\ntext = "t"\nchoices = ["a", "a"]\n')),
      /duplicate options/,
    ],
    [
      "an unknown criterion key",
      () => loadCriteria(rubricFile('[[criteria]]\nname = "x"\ntext = "t"\nwieght = 2\n')),
      /criterion 0: .*wieght/,
    ],
    ["invalid JSON", () => loadCriteria(rubricFile("{", ".json")), /is not valid JSON/],
    ["a missing file", () => loadCriteria("/nonexistent/rubric.toml"), /cannot read rubric file/],
  ];
  for (const [what, load, message] of bad) {
    it(`refuses ${what}`, () => {
      assert.throws(load, (e) => e instanceof TaskError && message.test(e.message));
    });
  }

  it("refuses a bad rubric before any rollout, naming the judge", () => {
    const path = rubricFile();
    assert.throws(
      () => configured(rubric, { path, weights: { typo: 1 } }, "http://127.0.0.1:9/v1"),
      (e) =>
        e instanceof InputError && e.code === "judge_invalid" &&
        /^judge 'rubric': `weights` overrides name no criterion/.test(e.message),
    );
    assert.throws(
      () => judgeEntry(rubric, { path, max_criteria: 0 }),
      /`max_criteria` must be >= 1/,
    );
    assert.throws(() => judgeEntry(rubric, { path, weight: NaN }));
  });
});

describe("parseVerdictsText()", () => {
  const v = { verdicts: [{ name: "a", reason: "r", verdict: "yes" }] };
  it("takes the first balanced object with a verdicts key, after any reasoning", () => {
    assert.deepEqual(parseVerdictsText(JSON.stringify(v)), v.verdicts);
    const text = `<think>{"verdicts": [{"name":"draft","reason":"","verdict":"no"}]}</think>` +
      `Here you go: {"note": "}{"} then ${JSON.stringify(v)} and {"verdicts": []}`;
    assert.deepEqual(parseVerdictsText(text), v.verdicts);
  });

  it("refuses replies without one", () => {
    for (const text of ["", "yes", '{"verdicts": "yes"}', `<think>${JSON.stringify(v)}`]) {
      assert.throws(() => parseVerdictsText(text), /no verdicts JSON object/);
    }
  });
});

describe("rubric judge against a fake judge model", () => {
  let fake: Fake;
  let script: (prompt: string, body: Record<string, unknown>) =>
    | FakeReply
    | string
    | Promise<
      FakeReply | string
    > = (p) => parisVerdicts(p);
  before(async () => {
    process.env[JUDGE_KEY_VAR] = JUDGE_KEY;
    fake = await startFakeOpenAI({ apiKey: JUDGE_KEY, script: (b) => script(promptOf(b), b) });
    await openJudgeInterception();
  });
  after(async () => {
    await fake.close();
    await closeJudgeInterception();
  });
  const reply = (verdicts: { name: string; verdict: string }[]) => () =>
    JSON.stringify({ verdicts: verdicts.map((v) => ({ ...v, reason: "r" })) });

  it("weights 3/1 with yes/no score 0.75 in one call, one metric per criterion", async () => {
    script = (p) => parisVerdicts(p);
    const n = fake.requests.length;
    const trace = qaTrace();
    const result = await scoreWith(rubric, { path: rubricFile() }, fake.url, trace);
    assert.deepEqual(result, {
      reward: 0.75,
      metrics: { "rubric/mentions_paris": 1, "rubric/is_polite": 0 },
    });
    assert.equal(fake.requests.length, n + 1);
    const prompt = promptOf(at(fake.requests, n).body);
    assert.ok(
      prompt.includes(
        "- mentions_paris: The response mentions Paris. (answer one of, worst to best: no, yes)\n" +
          "- is_polite: The response is polite. (answer one of, worst to best: no, yes)",
      ),
      prompt,
    );
    assert.ok(prompt.includes('{"verdicts": [{"name": "<criterion name>"'), "the JSON suffix");
    assert.equal(at(fake.requests, n).body.response_format, undefined);
    const records = trace.info.judge as { parsed: { verdicts: unknown[] } }[];
    assert.equal(records.length, 1);
    assert.equal(at(records, 0).parsed.verdicts.length, 2);
  });

  it("grades the whole transcript by default, never the reasoning", async () => {
    await scoreWith(rubric, { path: rubricFile() }, fake.url, fullTrace());
    const prompt = promptOf(fake.requests.at(-1)!.body);
    assert.ok(prompt.includes("TOOL RESULT: Paris is the capital."));
    assert.ok(!prompt.includes("SECRET REASONING"));
  });

  it("refuses verdicts that do not name the batch's criteria", async () => {
    script = reply([{ name: "typo", verdict: "yes" }]);
    const trace = qaTrace();
    await assert.rejects(
      scoreWith(rubric, { path: rubricFile() }, fake.url, trace),
      (e) =>
        e instanceof TaskError &&
        /judge verdicts name \["typo"\], expected the batch's \["is_polite","mentions_paris"\]/
          .test(e.message),
    );
    assert.equal((trace.info.judge as unknown[]).length, 1);
    script = reply([
      { name: "mentions_paris", verdict: "yes" },
      { name: "mentions_paris", verdict: "yes" },
    ]);
    await assert.rejects(
      scoreWith(rubric, { path: rubricFile() }, fake.url, qaTrace()),
      /expected the batch/,
    );
  });

  it("scores ordered choices by rank under the judge's name", async () => {
    script = reply([{ name: "depth", verdict: "partial" }]);
    const path = rubricFile(CHOICES_TOML);
    assert.deepEqual(await scoreWith(rubric, { path, name: "q" }, fake.url, qaTrace()), {
      reward: 0.5,
      metrics: { "q/depth": 0.5 },
    });
    script = reply([{ name: "depth", verdict: "GOOD" }]);
    assert.deepEqual(await scoreWith(rubric, { path }, fake.url, qaTrace()), {
      reward: 1,
      metrics: { "rubric/depth": 1 },
    });
    script = reply([{ name: "depth", verdict: "maybe" }]);
    await assert.rejects(
      scoreWith(rubric, { path }, fake.url, qaTrace()),
      /judge answered "maybe" for 'depth', expected one of \["none","partial","good"\]/,
    );
  });

  it("shows a reference solution only with answer_field", async () => {
    script = (p) => parisVerdicts(p);
    await scoreWith(rubric, { path: rubricFile() }, fake.url, qaTrace());
    assert.ok(!promptOf(fake.requests.at(-1)!.body).includes("Reference solution"));
    await scoreWith(
      rubric,
      { path: rubricFile(), answer_field: "answer" },
      fake.url,
      qaTrace("It is Paris.", "ZEBRA-GOLD ```` x"),
    );
    const prompt = promptOf(fake.requests.at(-1)!.body);
    assert.ok(prompt.includes("Reference solution"));
    assert.ok(prompt.includes("`````\nZEBRA-GOLD ```` x\n`````"), prompt);
    await assert.rejects(
      scoreWith(rubric, { path: rubricFile(), answer_field: "gold" }, fake.url, qaTrace()),
      /rubric judge found no 'gold' field/,
    );
  });

  it("fills a custom prompt raw, still asking for JSON", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-rubric-prompt-"));
    const prompt = join(dir, "p.txt");
    writeFileSync(prompt, "Q={question}\nR={response}\n{criteria}");
    script = (p) => parisVerdicts(p);
    await scoreWith(
      rubric,
      { path: rubricFile(), prompt, view: "last_reply" },
      fake.url,
      qaTrace(),
    );
    const sent = promptOf(fake.requests.at(-1)!.body);
    assert.ok(sent.startsWith("Q=Capital of France?\nR=It is Paris.\n- mentions_paris: "), sent);
    assert.ok(sent.includes('"verdicts"'));
  });

  it("batches with max_criteria, one call per batch", async () => {
    script = (p) => parisVerdicts(p);
    const n = fake.requests.length;
    const result = await scoreWith(
      rubric,
      { path: rubricFile(), max_criteria: 1 },
      fake.url,
      qaTrace(),
    );
    assert.deepEqual(result, {
      reward: 0.75,
      metrics: { "rubric/mentions_paris": 1, "rubric/is_polite": 0 },
    });
    const prompts = fake.requests.slice(n).map((r) => promptOf(r.body));
    assert.equal(prompts.length, 2);
    for (const p of prompts) assert.equal([...p.matchAll(/^- /gm)].length, 1);
  });

  it("cancels the other batches when one fails", async () => {
    let release = () => {};
    const held = new Promise<void>((r) => (release = r));
    const path = rubricFile(
      RUBRIC_TOML + '\n[[criteria]]\nname = "is_brief"\ntext = "The response is brief."\n',
    );
    let arrived = 0;
    let allArrived = () => {};
    const all = new Promise<void>((r) => (allArrived = r));
    script = async (p) => {
      if (++arrived === 3) allArrived();
      if (p.includes("- mentions_paris:")) {
        await all;
        return reply([{ name: "typo", verdict: "yes" }])();
      }
      await held;
      return parisVerdicts(p);
    };
    const trace = qaTrace();
    const n = fake.requests.length;
    await assert.rejects(
      scoreWith(rubric, { path, max_criteria: 1 }, fake.url, trace),
      /expected the batch/,
    );
    // the two held calls were sent, and abandoned: only the failed call is recorded
    assert.equal(fake.requests.length, n + 3);
    assert.equal((trace.info.judge as unknown[]).length, 1);
    release();
  });

  it("asks for structured output with a JSON schema", async () => {
    script = (p) => parisVerdicts(p);
    const n = fake.requests.length;
    const trace = qaTrace();
    const result = await scoreWith(
      rubric,
      { path: rubricFile(), structured_output: true },
      fake.url,
      trace,
    );
    assert.equal((result as { reward: number }).reward, 0.75);
    const body = at(fake.requests, n).body;
    assert.deepEqual(body.response_format, VERDICTS_RESPONSE_FORMAT);
    assert.ok(!promptOf(body).includes('"verdicts"'), "no JSON suffix");
    script = () => "";
    await assert.rejects(
      scoreWith(rubric, { path: rubricFile(), structured_output: true }, fake.url, qaTrace()),
      /no parseable structured output \(finish_reason=stop\)/,
    );
    script = () => "not json";
    await assert.rejects(
      scoreWith(rubric, { path: rubricFile(), structured_output: true }, fake.url, qaTrace()),
      /no parseable structured output/,
    );
  });

  it("through scoreTrace: own reward, reference and rubric side by side", async () => {
    script = (p) => p.includes('"verdicts"') ? parisVerdicts(p) : "yes";
    const own: NamedReward = { name: "own", fn: () => 0.25 };
    const judges = [
      configured(reference, { weight: 0.5 }, fake.url),
      configured(rubric, { path: rubricFile(), name: "quality" }, fake.url),
    ];
    const trace = qaTrace();
    await scoreTrace(trace, hookContext(trace.task.data as TaskData, trace), {
      metrics: [],
      rewards: [own],
      judges,
    });
    assert.deepEqual(trace.errors, []);
    assert.deepEqual(trace.rewards, {
      own: { score: 0.25, weight: 1 },
      reference: { score: 1, weight: 0.5 },
      quality: { score: 0.75, weight: 1 },
    });
    assert.deepEqual(trace.metrics, { "quality/mentions_paris": 1, "quality/is_polite": 0 });
    assert.equal((trace.info.judge as unknown[]).length, 2);
    assert.equal(trace.extra_usage.length, 2);
  });

  it("a failing rubric leaves its seed null and records no metrics", async () => {
    script = () => "no JSON here";
    const trace = qaTrace();
    await scoreTrace(trace, hookContext(trace.task.data as TaskData, trace), {
      metrics: [],
      rewards: [],
      judges: [configured(rubric, { path: rubricFile() }, fake.url)],
    });
    assert.deepEqual(trace.rewards, { rubric: null });
    assert.deepEqual(trace.metrics, {});
    assert.equal(at(trace.errors, 0).type, "TaskError");
    assert.match(
      at(trace.errors, 0).message,
      /^judge 'rubric': judge returned no verdicts JSON object/,
    );
  });
});
