import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TaskError } from "../kit/errors.ts";
import type { JudgeConfig, JudgeContext } from "../kit/contract.ts";
import {
  answerNumber,
  extractBoxed,
  extractBoxedAnswer,
  extractTag,
  lastLine,
  lastNumber,
  parseNumber,
} from "../kit/scoring/extract.ts";
import { extractAnswer, matchAnswer, matchOne, normalizeText } from "../kit/scoring/match.ts";
import { SequenceMatcher, sequenceRatio } from "../kit/scoring/sequence_matcher.ts";
import { seededRandom } from "../kit/taskset_view.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import matchJudge, { matchJudgeConfig } from "../plugins/judges/match/mod.ts";
import { traceWithMessages, traceWithReply } from "./_trace_helpers.ts";
import { judgeEntry } from "./fixtures/judges/judge_helpers.ts";
import { runPython } from "./_python.ts";
import { at } from "./_assert.ts";

function randomText(rand: () => number, n: number, alphabet: string): string {
  const chars = Array.from(alphabet);
  let s = "";
  for (let i = 0; i < n; i++) s += chars[Math.floor(rand() * chars.length)];
  return s;
}

describe("SequenceMatcher", () => {
  it("ratio() equals CPython difflib's for many string pairs", () => {
    const rand = seededRandom(42);
    const long = "The quick brown fox jumps over the lazy dog. ".repeat(8);
    const pairs: [string, string][] = [
      ["", ""],
      ["abc", ""],
      ["", "abc"],
      ["abcd", "bcde"],
      [" abcd", "abcd abcd"],
      ["hello world", "dlrow olleh"],
      ["The quick brown fox.", ".xof nworb kciuq ehT"],
      ["naïve café 😀👍🏽", "cafe naive 😀👍"],
      [long, long.split("").reverse().join("")],
      [long, long.replace(/o/g, "0")],
      ["a".repeat(250) + "b", "a".repeat(240) + "b" + "a".repeat(10)],
      ["x" + "ab".repeat(150), "ab".repeat(160) + "y"],
      ["x" + "a".repeat(300), "a".repeat(300) + "y"],
      ["a".repeat(300), "a".repeat(300)],
    ];
    for (let i = 0; i < 25; i++) {
      const alphabet = i % 2 ? "ab c" : "abcdefghij klmnop😀é";
      const a = randomText(rand, Math.floor(rand() * 400), alphabet);
      const b = rand() < 0.5
        ? randomText(rand, Math.floor(rand() * 400), alphabet)
        : a.slice(7) + "zz" + a.slice(0, 5);
      pairs.push([a, b]);
    }
    const py = runPython(
      `import sys, json, difflib\nfor a, b in json.loads(sys.stdin.buffer.read().decode("utf-8")):\n` +
        `    m = difflib.SequenceMatcher(None, a, b)\n` +
        `    print(json.dumps([m.ratio(), [list(x) for x in m.get_matching_blocks()[:-1]]]))`,
      JSON.stringify(pairs),
    ).trim().split("\n").map((l) => JSON.parse(l) as [number, number[][]]);
    assert.equal(py.length, pairs.length);
    pairs.forEach(([a, b], i) => {
      const m = new SequenceMatcher(a, b);
      assert.equal(m.ratio(), at(py, i)[0], `pair ${i}`);
      assert.deepEqual(
        m.getMatchingBlocks().map((x) => [x.a, x.b, x.size]),
        at(py, i)[1],
        `pair ${i}`,
      );
    });
  });

  it("autojunk drops popular items of a 200+ item b, and can be turned off", () => {
    const b = "a".repeat(300);
    // Every item of b is popular, so only the extension of an empty match can match: none here.
    assert.equal(new SequenceMatcher("x" + b, b + "y").ratio(), 0);
    assert.ok(new SequenceMatcher("x" + b, b + "y", { autojunk: false }).ratio() > 0.99);
    assert.equal(sequenceRatio("a".repeat(199) + "b", "a".repeat(199) + "b"), 1);
  });
});

describe("extractors", () => {
  it("extractBoxed() takes the last box and balances nested braces", () => {
    assert.equal(extractBoxed("first \\boxed{1} then \\boxed{\\frac{1}{2}} end"), "\\frac{1}{2}");
    assert.equal(extractBoxed("\\boxed{ 42 }"), "42");
    assert.equal(extractBoxed("no box here"), null);
    assert.equal(extractBoxed("\\boxed{open {never closed}"), null);
    assert.equal(extractBoxedAnswer("plain"), "plain");
    assert.equal(extractBoxedAnswer("so \\boxed{7}"), "7");
  });

  it("extractTag() takes the last closed element", () => {
    const text = "<answer>one</answer> <answer kind='x'>\n two \n</answer> <answer>three";
    assert.equal(extractTag(text, "answer"), "two");
    assert.equal(extractTag("<a.b>dots</a.b>", "a.b"), "dots");
    assert.equal(extractTag("<ab>x</ab>", "a"), null);
    assert.equal(extractTag("nothing", "answer"), null);
  });

  it("lastLine() skips blank lines", () => {
    assert.equal(lastLine("a\n  b  \r\n\n  \n"), "b");
    assert.equal(lastLine(" \n\t"), null);
    assert.equal(lastLine("a\rb\r"), "b");
    assert.equal(lastLine(""), null);
  });

  it("lastLine() reads what splitting the whole text into lines reads", () => {
    const bySplit = (text: string) => {
      const line = text.split(/\r?\n|\r/).findLast((l) => l.trim() !== "");
      return line === undefined ? null : line.trim();
    };
    const pieces = ["a", "bc", " ", "\t", "\n", "\r", "\r\n", "\u00a0", "\u2028", "\n\r"];
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 16;
    for (let i = 0; i < 3000; i++) {
      let text = "";
      for (let k = next() % 10; k > 0; k--) text += pieces[next() % pieces.length];
      assert.equal(lastLine(text), bySplit(text), JSON.stringify(text));
    }
  });

  it("lastNumber() and parseNumber() read signed, grouped and decimal numbers", () => {
    assert.equal(lastNumber("I had 3 apples, now $1,234.50 left"), 1234.5);
    assert.equal(lastNumber("x = -4"), -4);
    assert.equal(lastNumber("range 3-4"), 4);
    assert.equal(lastNumber("about .5 or 2e3"), 2000);
    assert.equal(lastNumber("it is 42."), 42);
    assert.equal(lastNumber("v2 and abc"), null);
    assert.equal(lastNumber("none"), null);
    assert.equal(parseNumber(" 1,000 "), 1000);
    assert.equal(parseNumber("12abc"), null);
  });

  it("answerNumber() prefers #### then \\boxed{} then the last number", () => {
    assert.equal(answerNumber("so 5 + 6 = 11\n#### 11\nthanks 3"), 11);
    assert.equal(answerNumber("\\boxed{12} and later 99"), 12);
    assert.equal(answerNumber("answers 1 then 2"), 2);
    assert.equal(answerNumber("no numbers"), null);
  });
});

describe("matchOne() / matchAnswer()", () => {
  it("exact compares trimmed text, case-sensitively by default", () => {
    assert.equal(matchOne("  Paris \n", "Paris", { mode: "exact" }), true);
    assert.equal(matchOne("paris", "Paris", { mode: "exact" }), false);
    assert.equal(matchOne("paris", "Paris", { mode: "exact", caseSensitive: false }), true);
    assert.equal(matchOne("Paris.", "Paris", { mode: "exact" }), false);
  });

  it("normalized ignores case, punctuation and spaces (the default mode)", () => {
    assert.equal(normalizeText("Hello, World! ß"), "helloworldss");
    assert.equal(matchOne("Hello,   WORLD!", "hello world"), true);
    assert.equal(matchOne("Hello there world", "hello world"), false);
  });

  it("contains finds the normalized answer inside the reply", () => {
    assert.equal(matchOne("Sure! Hello, World!!", "hello world", { mode: "contains" }), true);
    assert.equal(matchOne("goodbye", "hello world", { mode: "contains" }), false);
    assert.equal(matchOne("the answer is ?!", "?!", { mode: "contains" }), true);
    assert.equal(matchOne("the answer is !", "?!", { mode: "contains" }), false);
  });

  it("numeric compares numbers within a tolerance", () => {
    assert.equal(matchOne("The total is 1,234.", "1234", { mode: "numeric" }), true);
    assert.equal(matchOne("#### 0.3000000001", "0.3", { mode: "numeric" }), true);
    assert.equal(matchOne("0.31", "0.3", { mode: "numeric" }), false);
    assert.equal(matchOne("1000000.5", "1000000", { mode: "numeric" }), true);
    assert.equal(matchOne("1000002", "1000000", { mode: "numeric" }), false);
    assert.equal(matchOne("1000002", "1000000", { mode: "numeric", tolerance: 1e-5 }), true);
    assert.equal(matchOne("no number", "3", { mode: "numeric" }), false);
    assert.throws(() => matchOne("3", "three", { mode: "numeric" }), TaskError);
  });

  it("regex searches the reply, case-insensitively when asked", () => {
    assert.equal(matchOne("The capital is Paris.", "\\bparis\\b", { mode: "regex" }), false);
    assert.equal(
      matchOne("The capital is Paris.", "\\bparis\\b", { mode: "regex", caseSensitive: false }),
      true,
    );
    assert.equal(matchOne("abc", "^b", { mode: "regex" }), false);
    assert.throws(() => matchOne("x", "(", { mode: "regex" }), /invalid regex/);
  });

  it("every extractor picks its part of the reply; nothing found never matches", () => {
    assert.equal(extractAnswer("a\nb", "last_line"), "b");
    assert.equal(extractAnswer("7 then 8", "last_number"), "8");
    assert.equal(
      matchOne("I think 3, no \\boxed{4}", "4", { mode: "exact", extract: "boxed" }),
      true,
    );
    assert.equal(matchOne("I think 4", "4", { mode: "exact", extract: "boxed" }), false);
    assert.equal(
      matchOne("<answer>Lyon</answer> <answer>Paris</answer>", "paris", { extract: "tag:answer" }),
      true,
    );
    assert.equal(matchOne("Paris", "paris", { extract: "tag:answer" }), false);
    assert.equal(matchOne("Thinking...\nFinal: B", "final b", { extract: "last_line" }), true);
    assert.equal(
      matchOne("3 apples and 4 pears", "4", { mode: "numeric", extract: "last_number" }),
      true,
    );
    assert.equal(
      matchOne("#### 5 and then 9", "5", { mode: "numeric", extract: "last_number" }),
      false,
    );
    assert.throws(() => extractAnswer("x", "bogus"), TypeError);
  });

  it("matchAnswer() treats a list as any-of and refuses object answers", () => {
    assert.equal(matchAnswer("Paris", ["Lyon", "paris"]), 1);
    assert.equal(matchAnswer("Nice", ["Lyon", "paris"]), 0);
    assert.equal(matchAnswer("Nice", []), 0);
    assert.equal(matchAnswer("42", 42, { mode: "numeric" }), 1);
    assert.throws(() => matchAnswer("x", { a: 1 }), TaskError);
  });
});

function judgeContext(
  task: TaskData,
  reply: string,
  judge: Record<string, unknown> = {},
): JudgeContext<JudgeConfig<typeof matchJudgeConfig>> {
  return {
    task,
    trace: traceWithReply(reply),
    runtime: null,
    config: { id: "", system_prompt: null },
    signal: new AbortController().signal,
    judge: judgeEntry(matchJudge, judge),
    rewardKey: "match",
    prompt: null,
    complete: () => Promise.reject(new Error("the match judge must not call a model")),
  };
}

describe("match judge plugin", () => {
  it("is a judge plugin with documented defaults", () => {
    assert.equal(matchJudge.kind, "judge");
    assert.equal(matchJudge.id, "match");
    assert.deepEqual(matchJudgeConfig.parse({}), {
      mode: "normalized",
      extract: "none",
      answer_field: "answer",
      tolerance: 1e-6,
      case_sensitive: true,
      missing: "error",
    });
    for (const [key, schema] of Object.entries(matchJudgeConfig.shape)) {
      assert.ok(schema.description, `${key} has a description`);
    }
    assert.equal(matchJudgeConfig.safeParse({ extract: "tag:" }).success, false);
    assert.equal(matchJudgeConfig.safeParse({ mode: "fuzzy" }).success, false);
  });

  it("scores the last reply against the answer field", async () => {
    const task = { prompt: "Capital of France?", answer: "Paris", gold: ["42", "forty-two"] };
    assert.equal(await matchJudge.score(judgeContext(task, "paris!")), 1);
    assert.equal(await matchJudge.score(judgeContext(task, "Lyon")), 0);
    assert.equal(
      await matchJudge.score(
        judgeContext(task, "It is 42", { answer_field: "gold", mode: "contains" }),
      ),
      1,
    );
    assert.equal(
      await matchJudge.score(
        judgeContext(task, "so \\boxed{Paris}", { mode: "exact", extract: "boxed" }),
      ),
      1,
    );
  });

  it("uses the last assistant message of the last branch", async () => {
    const trace = traceWithMessages([
      { role: "user", content: "q" },
      { role: "assistant", content: "Paris" },
      { role: "user", content: "sure?" },
      { role: "assistant", content: "Lyon" },
    ]);
    const ctx = { ...judgeContext({ prompt: "q", answer: "Paris" }, ""), trace };
    assert.equal(await matchJudge.score(ctx), 0);
  });

  it("refuses a task without the answer field", async () => {
    await assert.rejects(
      matchJudge.score(judgeContext({ prompt: "q" }, "x", { answer_field: "gold" })),
      (e: unknown) =>
        e instanceof TaskError && e.message === "match judge: task has no 'gold' field",
    );
  });

  it("records no score for a task without the answer field when missing = skip", async () => {
    const ctx = judgeContext({ prompt: "q" }, "x", { answer_field: "gold", missing: "skip" });
    assert.deepEqual(await matchJudge.score(ctx), {});
    assert.equal(
      await matchJudge.score(
        judgeContext({ prompt: "q", gold: "x" }, "x", { answer_field: "gold", missing: "skip" }),
      ),
      1,
    );
  });
});
