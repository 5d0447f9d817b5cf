/**
 * The shared conformance suite of the {@link JudgePlugin} contract (kit/contract.ts).
 * Every judge calls {@link judgeConformance}: configured as a run configures it (the entry
 * schema, `check`, the engine's judge context) against a strict loopback chat completions
 * server, it must score in range, tell a right reply from a wrong one, make its model calls
 * only through `complete` (so each is recorded on the trace), name its metrics after its
 * reward key, and fail with a typed error, never a 0.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { z } from "zod";
import type { JudgePlugin, JudgeResult } from "../../kit/contract.ts";
import { TaskError, VerifiersError } from "../../kit/errors.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { Trace } from "../../kit/trace/types.ts";
import { type FakeReply, startFakeOpenAI } from "../fakes/openai_server.ts";
import { hookContext } from "../_trace_helpers.ts";
import {
  closeJudgeInterception,
  configured,
  JUDGE_KEY,
  JUDGE_KEY_VAR,
  judgeEntry,
  openJudgeInterception,
  qaTrace,
} from "../fixtures/judges/judge_helpers.ts";

/** What a judge needs to be checked. */
export interface JudgeConformanceCase {
  plugin: JudgePlugin;
  /** The judge entry's own keys (those without a default). @default {} */
  config?: Record<string, unknown>;
  /**
   * The judge model's reply to a prompt whose response is right (`correct`) or wrong; null
   * for a judge that calls no model.
   */
  model: ((prompt: string, correct: boolean) => string) | null;
  /** The range every reward and metric lies in. @default [0, 1] */
  range?: [number, number];
}

/** The reply "It is Paris." to "Capital of France?" (answer Paris) is right; "It is Rome." is not. */
const RIGHT = "It is Paris.";
const WRONG = "It is Rome.";

/** Numbers by name. */
type Numbers = Record<string, number>;

/** The rewards of a judge result keyed as the run records them, and its metrics. */
function numbers(result: JudgeResult, key: string): { rewards: Numbers; metrics: Numbers } {
  if (typeof result === "number") return { rewards: { [key]: result }, metrics: {} };
  if ("metrics" in result && typeof result.metrics === "object") {
    const { reward, metrics } = result as { reward: JudgeResult; metrics: Numbers };
    return { rewards: numbers(reward, key).rewards, metrics };
  }
  return { rewards: result as Numbers, metrics: {} };
}

/**
 * Declares `describe(label + " judge conformance")`: the behaviour every judge must have.
 */
export function judgeConformance(label: string, c: JudgeConformanceCase): void {
  const { plugin } = c;
  const [lo, hi] = c.range ?? [0, 1];
  describe(`${label} judge conformance`, () => {
    let reply: (prompt: string) => FakeReply | string = () => "";
    let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
    const savedKey = process.env[JUDGE_KEY_VAR];
    before(async () => {
      process.env[JUDGE_KEY_VAR] = JUDGE_KEY;
      fake = await startFakeOpenAI({
        apiKey: JUDGE_KEY,
        script: (body) => reply(String(body.messages.at(-1).content)),
      });
      await openJudgeInterception();
    });
    after(async () => {
      await fake.close();
      await closeJudgeInterception();
      if (savedKey === undefined) delete process.env[JUDGE_KEY_VAR];
      else process.env[JUDGE_KEY_VAR] = savedKey;
    });

    /** Scores `trace` as a run would; the judge model answers `model(prompt, correct)`. */
    const score = async (trace: Trace, signal?: AbortSignal) => {
      const judge = configured(plugin, c.config ?? {}, fake.url);
      const ctx = hookContext(trace.task.data as TaskData, trace);
      if (signal) ctx.signal = signal;
      const before = fake.requests.length;
      const result = await judge.plugin.score(judge.context(ctx));
      return { result, key: judge.key, calls: fake.requests.length - before };
    };
    const answering = (correct: boolean) => {
      reply = (prompt) => c.model ? c.model(prompt, correct) : "";
    };

    it("declares the judge contract", () => {
      assert.equal(plugin.kind, "judge");
      assert.equal(plugin.abi, 1);
      assert.match(plugin.id, /^[a-z0-9][a-z0-9-]*$/);
      assert.ok(plugin.description.trim().length > 0 && !plugin.description.includes("\n"));
      assert.ok(plugin.config instanceof z.ZodObject, "config is a zod object schema");
      assert.equal(typeof plugin.score, "function");
      assert.ok(plugin.check === undefined || typeof plugin.check === "function");
    });

    it("its config schema documents every key; the entry and check() accept the defaults", () => {
      for (const [key, schema] of Object.entries(plugin.config.shape)) {
        const text = (schema as z.ZodType).description ?? "";
        assert.ok(text.trim().length > 0, `config key '${key}' has no description`);
      }
      const entry = judgeEntry(plugin, c.config ?? {});
      assert.deepEqual(judgeEntry(plugin, entry), entry, "defaults are a fixed point");
      plugin.check?.(entry);
    });

    it("scores a right reply at the top of its range and a wrong one lower", async () => {
      answering(true);
      const right = await score(qaTrace(RIGHT));
      answering(false);
      const wrong = await score(qaTrace(WRONG));
      for (const { result, key } of [right, wrong]) {
        const { rewards, metrics } = numbers(result, key);
        assert.ok(Object.keys(rewards).length > 0, "no reward");
        for (const [name, v] of Object.entries({ ...rewards, ...metrics })) {
          assert.ok(Number.isFinite(v) && v >= lo && v <= hi, `${name} = ${v}`);
        }
      }
      const top = Object.values(numbers(right.result, right.key).rewards);
      assert.ok(top.every((v) => v === hi), `right reply: ${JSON.stringify(right.result)}`);
      const low = Object.values(numbers(wrong.result, wrong.key).rewards);
      assert.ok(low.some((v) => v < hi), `wrong reply: ${JSON.stringify(wrong.result)}`);
    });

    it("names its metrics <reward key>/<what>", async () => {
      answering(true);
      const { result, key } = await score(qaTrace(RIGHT));
      for (const name of Object.keys(numbers(result, key).metrics)) {
        assert.ok(name.startsWith(`${key}/`) && name.length > key.length + 1, name);
      }
    });

    it("makes model calls only through complete(), each recorded on the trace", async () => {
      answering(true);
      const trace = qaTrace(RIGHT);
      const messages = structuredClone(trace.nodes);
      const task = structuredClone(trace.task.data);
      const { calls, key } = await score(trace);
      if (c.model) assert.ok(calls > 0, "a judge with a model made no model call");
      else assert.equal(calls, 0, "a judge without a model called one");
      const records = (trace.info.judge ?? []) as { judge: string; model: string }[];
      assert.equal(records.length, calls, "every model call is in trace.info.judge");
      for (const r of records) assert.deepEqual([r.judge, r.model], [key, "run-model"]);
      assert.equal(trace.extra_usage.length, calls, "every call's usage is in extra_usage");
      assert.deepEqual(trace.nodes, messages, "the conversation is left alone");
      assert.deepEqual(trace.task.data, task, "the task data is left alone");
    });

    it("scores the same trace the same way twice", async () => {
      answering(false);
      const first = await score(qaTrace(WRONG));
      const second = await score(qaTrace(WRONG));
      assert.deepEqual(second.result, first.result);
    });

    // skipped where it is declared, so both runners report it skipped (not passed)
    const noModel = c.model ? false : "calls no model";
    it("a failing judge model is a typed error, never a score", { skip: noModel }, async () => {
      reply = () => ({ status: 400, error: "conformance: this request is refused" });
      await assert.rejects(score(qaTrace(RIGHT)), VerifiersError);
      reply = () => "\u00af\\_(\u30c4)_/\u00af";
      await assert.rejects(score(qaTrace(RIGHT)), TaskError);
    });

    it(
      "an aborted rollout signal stops its model calls with an error",
      { skip: noModel },
      async () => {
        answering(true);
        const before = fake.requests.length;
        await assert.rejects(score(qaTrace(RIGHT), AbortSignal.abort()));
        assert.equal(fake.requests.length, before, "a model call was made after the abort");
      },
    );
  });
}
