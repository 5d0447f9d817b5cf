/**
 * The judge plugin contract: what a judge gets to score one trace (its context and model
 * calls) and what it returns. `defineJudge` and the other kinds live in contract.ts.
 *
 * @module
 */
import type { ConfigSchema, HookContext, JudgeConfig, PluginBase, ScoreValue } from "./contract.ts";
import type { Message } from "./trace/types.ts";

/** What one judge model call returned; the framework has already recorded it in the trace. */
export interface JudgeCompletion {
  /** The reply text ("" when the model sent no content). */
  text: string;
  /** What `options.parse` returned (null without a parser). */
  parsed: unknown;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  finish_reason: string | null;
  /** The model's refusal message (structured output), else null. */
  refusal: string | null;
}

/** Options of {@link JudgeContext.complete}. */
export interface JudgeCompleteOptions {
  /** Sent as `response_format` (e.g. `{type: "json_schema", json_schema: {...}}`). */
  responseFormat?: unknown;
  /**
   * Turns the reply text into the judge's verdict; its result is recorded as `parsed`.
   * When it throws, the call stays recorded (with `parsed: null`) and the error propagates.
   */
  parse?: (text: string) => unknown;
  /** Cancels this call (in addition to the rollout's own signal). */
  signal?: AbortSignal;
}

/** What a judge gets to score one trace; `J` is the judge entry's resolved config. */
export interface JudgeContext<J = JudgeConfig> extends HookContext {
  /** The judge's resolved config (client fields, model, weight, own keys). */
  judge: J;
  /** The key the judge's reward is recorded under (`name`, else derived from the id). */
  rewardKey: string;
  /** The text of the entry's `prompt` file (read before the run), or null to use the judge's own. */
  prompt: string | null;
  /**
   * Sends the messages as one chat completion to the judge model and records the call
   * in `trace.info.judge` (`{judge, model, text, parsed, usage, time}`) and its usage in
   * `trace.extra_usage` — also when parsing fails. With `responseFormat`, a refusal or
   * an empty reply throws (after recording).
   */
  complete(messages: Message[], options?: JudgeCompleteOptions): Promise<JudgeCompletion>;
}

/** A judge's reward together with metrics it measured on the way (e.g. per criterion). */
export interface JudgeScore {
  /** The reward: one number (under the judge's key) or several keyed numbers. */
  reward: ScoreValue;
  /** Unweighted metrics recorded as given (name them `<rewardKey>/<what>`). */
  metrics: Record<string, number>;
}

/**
 * What a judge's `score` returns: a {@link ScoreValue}, or a {@link JudgeScore} (told
 * apart by its `metrics` object) when it also reports metrics.
 */
export type JudgeResult = ScoreValue | JudgeScore;

/** A scorer that runs after the task's own rewards. `S` is the schema of its own keys. */
export interface JudgePlugin<S extends ConfigSchema = ConfigSchema> extends PluginBase<"judge", S> {
  /**
   * Scores the trace: one number (the reward, weighted by the entry's `weight`), several
   * keyed numbers (each a reward with that weight), or `{reward, metrics}`. Throwing
   * records a `TaskError` and leaves the reward null — a judge failure is never a 0.
   */
  score(ctx: JudgeContext<JudgeConfig<S>>): Promise<JudgeResult>;
  /**
   * Checks a resolved judge entry before any rollout (e.g. reads the files it names);
   * throwing refuses the run with the error's message.
   */
  check?(config: JudgeConfig<S>): void;
}
