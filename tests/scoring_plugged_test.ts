import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { applyPlugs, loadPluggedFn, parseFnSpecifier } from "../lib/plugins/plugged.ts";
import { scoreTrace } from "../lib/rollout/scoring.ts";
import { InputError, PluginError } from "../kit/errors.ts";
import { parseJudgeChoice } from "../kit/scoring/judge_choice.ts";
import type { MetricHook, RewardHook, StopHook } from "../kit/contract.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import { hookContext, traceWithReply } from "./_trace_helpers.ts";
import { at } from "./_assert.ts";

const FNS = join(import.meta.dirname!, "fixtures", "judges", "scoring_fns.ts");

function ctx(reply = "the answer is 42", task: TaskData = { prompt: "q", answer: "42" }) {
  const trace = traceWithReply(reply);
  trace.task.data = task;
  return hookContext(task, trace);
}

describe("parseFnSpecifier()", () => {
  const ok: [string, string, string][] = [
    ["./scoring.ts:score", "./scoring.ts", "score"],
    ["path/to/file.ts:score", "path/to/file.ts", "score"],
    ["/abs/file.ts:$fn_2", "/abs/file.ts", "$fn_2"],
    ["npm:@acme/scoring@1.2.0/sub:score", "npm:@acme/scoring@1.2.0/sub", "score"],
    ["jsr:@acme/scoring:score", "jsr:@acme/scoring", "score"],
    ["https://example.com:8443/mod.ts:score", "https://example.com:8443/mod.ts", "score"],
    ["file:///tmp/mod.ts:score", "file:///tmp/mod.ts", "score"],
    ["my-scoring/sub:score", "my-scoring/sub", "score"],
    ["./scoring.ts", "./scoring.ts", "default"],
    ["https://example.com:8443/mod.ts", "https://example.com:8443/mod.ts", "default"],
    ["npm:scoring", "npm:scoring", "default"],
    ["my-scoring", "my-scoring", "default"],
  ];
  for (const [p, module, name] of ok) {
    it(`${p} -> ${module} : ${name}`, () =>
      assert.deepEqual(parseFnSpecifier(p), { module, name }));
  }
  for (const p of ["", ":score", "./scoring.ts:", "./scoring.ts:1x", "./a.ts:b:c", " ./a.ts:b"]) {
    it(`refuses ${JSON.stringify(p)}`, () => {
      assert.throws(
        () => parseFnSpecifier(p),
        (e) =>
          e instanceof InputError && e.code === "plugged_fn_invalid" &&
          e.message.startsWith(`fn "${p}" must be \`path/to/file.ts:name\``),
      );
    });
  }
});

describe("loadPluggedFn()", () => {
  it("loads a named export or the default export of a local .ts file", async () => {
    assert.equal((await loadPluggedFn(`${FNS}:threeQuarters`))(ctx()), 0.75);
    assert.equal((await loadPluggedFn(FNS))(ctx()), 0.5);
    assert.equal((await loadPluggedFn(`${pathToFileURL(FNS).href}:alwaysStop`))(ctx()), true);
  });

  it("resolves a relative path against cwd", async () => {
    const fn = await loadPluggedFn("./judges/scoring_fns.ts:answerSeen", {
      cwd: join(import.meta.dirname!, "fixtures"),
    });
    assert.equal(fn(ctx()), 1);
  });

  it("refuses a missing or non-function export", async () => {
    for (const p of [`${FNS}:notAFunction`, `${FNS}:nothing`]) {
      await assert.rejects(
        loadPluggedFn(p),
        (e) => e instanceof InputError && e.message === `fn "${p}" is not a function`,
      );
    }
  });

  it("refuses a module that is not there", async () => {
    await assert.rejects(
      loadPluggedFn("./no/such/file.ts:score"),
      (e) =>
        e instanceof PluginError &&
        /fn ".\/no\/such\/file.ts:score": module .* not found/.test(e.message),
    );
  });
});

describe("applyPlugs()", () => {
  const ownStops: Record<string, StopHook> = { done: { fn: () => false, priority: 5 } };
  const ownRewards: Record<string, RewardHook> = {
    correct: { fn: () => 0.25, weight: 2, priority: 1 },
    other: { fn: () => 1 },
  };

  it("a plugged stop replaces the taskset's, keeping its priority", async () => {
    const stop = at(
      applyPlugs("stop", ownStops, { done: { fn: `${FNS}:alwaysStop`, priority: null } }),
      0,
    );
    assert.equal(stop.name, "done");
    assert.equal(stop.priority, 5);
    assert.equal(await stop.fn(ctx()), true);
  });

  it("a plugged stop must return a boolean", async () => {
    const stop = at(applyPlugs("stop", {}, { odd: { fn: `${FNS}:notABoolean`, priority: 2 } }), 0);
    assert.equal(stop.priority, 2);
    await assert.rejects(
      Promise.resolve(stop.fn(ctx())),
      /stop "odd" \(fn ".*:notABoolean"\) returned string, not a boolean/,
    );
  });

  it("a plugged reward replaces the body and takes the config weight", async () => {
    const rewards = applyPlugs("reward", ownRewards, {
      correct: { fn: `${FNS}:threeQuarters`, priority: null, weight: 3 },
    });
    const c = ctx();
    await scoreTrace(c.trace, c, { rewards, metrics: [], judges: [] });
    assert.deepEqual(c.trace.rewards, {
      correct: { score: 0.75, weight: 3 },
      other: { score: 1, weight: 1 },
    });
    assert.equal(rewards.find((r) => r.name === "correct")!.priority, 1);
  });

  it("a plugged reward without a weight inherits the replaced one's, else 1", () => {
    const rewards = applyPlugs("reward", ownRewards, {
      correct: { fn: `${FNS}:threeQuarters`, priority: null, weight: null },
      extra: { fn: `${FNS}:answerSeen`, priority: null, weight: null },
    });
    assert.deepEqual(rewards.map((r) => [r.name, r.weight, r.priority]), [
      ["correct", 2, 1],
      ["other", undefined, undefined],
      ["extra", 1, 0],
    ]);
  });

  it("an fn-less entry overrides the weight and priority only", async () => {
    const rewards = applyPlugs("reward", ownRewards, {
      correct: { fn: null, priority: 9, weight: 0.5 },
    });
    const correct = rewards.find((r) => r.name === "correct")!;
    assert.equal(correct.weight, 0.5);
    assert.equal(correct.priority, 9);
    assert.equal(await correct.fn(ctx()), 0.25);
    const same = applyPlugs("reward", ownRewards, { correct: { fn: null, priority: null } });
    assert.equal(at(same, 0).weight, 2);
    assert.equal(at(same, 0).priority, 1);
  });

  it("an fn-less entry naming no hook is refused", () => {
    assert.throws(
      () => applyPlugs("metric", {}, { typo: { fn: null, priority: 1 } }),
      (e) =>
        e instanceof InputError && e.code === "plugged_hook_unknown" &&
        e.message ===
          'metric "typo" plugs no `fn` and the task has no metric named "typo" to override',
    );
  });

  it("a malformed fn is refused at once", () => {
    assert.throws(
      () => applyPlugs("reward", {}, { x: { fn: "./f.ts:", priority: null } }),
      /fn ".\/f.ts:" must be/,
    );
  });

  it("a plug whose module fails fails each call and is reported once", async () => {
    const reported: string[] = [];
    const metrics = applyPlugs<MetricHook>("metric", {}, {
      size: { fn: `${FNS}:nothing`, priority: null },
    }, { onLoadError: (m) => reported.push(m) });
    const c = ctx();
    await scoreTrace(c.trace, c, { rewards: [], metrics, judges: [] });
    assert.deepEqual(c.trace.metrics, { size: null });
    assert.equal(at(c.trace.errors, 0).type, "TaskError");
    assert.match(
      at(c.trace.errors, 0).message,
      /^metric 'size': fn ".*:nothing" is not a function$/,
    );
    assert.deepEqual(reported, [`metric 'size': fn "${FNS}:nothing" is not a function`]);
  });

  it("plugged metrics may return keyed values", async () => {
    const metrics = applyPlugs<MetricHook>("metric", {}, {
      size: { fn: `${FNS}:replySize`, priority: null },
    });
    const c = ctx("two words");
    await scoreTrace(c.trace, c, { rewards: [], metrics, judges: [] });
    assert.deepEqual(c.trace.metrics, { chars: 9, words: 2 });
  });
});

describe("parse_judge_choice (test_scoring)", () => {
  it("takes the choice after a FINAL JUDGMENT marker", () => {
    assert.equal(
      parseJudgeChoice("Final Judgment: B because it is a better answer", ["A", "B"]),
      "B",
    );
  });
});
