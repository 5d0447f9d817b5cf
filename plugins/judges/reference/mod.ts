/**
 * The `reference` judge: asks the judge model whether the rollout's reply matches the
 * task's reference answer and scores 1 (the positive verdict) or 0 (the negative one).
 *
 * A blank reply scores 0 without a judge call (a model failure); a verdict the parser
 * cannot read is a `TaskError` (a judge failure), never a 0.
 *
 * @module
 */
import { z } from "zod";
import {
  defineJudge,
  fence,
  JUDGE_VIEWS,
  judgeAnswer,
  type JudgeConfig,
  type JudgeContext,
  judgeQuestion,
  judgeResponse,
  judgeVerdict,
  renderTemplate,
} from "../../../kit/mod.ts";
import { REFERENCE_PROMPT } from "./prompt.ts";

/** The `reference` judge's own config keys. */
export const referenceJudgeConfig = z.object({
  answer_field: z.string().min(1).default("answer").describe(
    "Task field holding the reference answer; a list means any of its items (one per line)",
  ),
  question_field: z.string().default("").describe(
    "Task field filling {question} (empty = the task's prompt as text)",
  ),
  view: z.enum(JUDGE_VIEWS).default("last_reply").describe(
    "What fills {response}: last_reply (the final reply) or full_trace (the transcript)",
  ),
  choices: z.tuple([z.string(), z.string()]).default(["yes", "no"]).refine(
    ([pos, neg]) => pos !== "" && neg !== "" && pos.toUpperCase() !== neg.toUpperCase(),
    {
      error: (i) =>
        `\`choices\` needs two distinct, non-empty verdict labels, got ${JSON.stringify(i.input)}`,
    },
  ).describe("The (positive, negative) verdict labels; the positive one scores 1"),
});

/** The prompt a `reference` judge sends, from its fields (built-in template: fenced). */
function referencePrompt(
  template: string | null,
  fields: {
    question: string;
    answer: string;
    response: string;
    positive: string;
    negative: string;
  },
): string {
  if (template !== null) return renderTemplate(template, fields);
  return renderTemplate(REFERENCE_PROMPT, {
    ...fields,
    question: fence(fields.question),
    answer: fence(fields.answer),
    response: fence(fields.response),
  });
}

/** Scores one trace with a `reference` judge: 1 or 0, or throws a `TaskError`. */
async function scoreReference(
  ctx: JudgeContext<JudgeConfig<typeof referenceJudgeConfig>>,
): Promise<number> {
  const cfg = ctx.judge;
  const answer = judgeAnswer(ctx.task, cfg.answer_field, "reference");
  const response = judgeResponse(ctx.trace, cfg.view);
  if (!response.trim()) return 0;
  const [positive, negative] = cfg.choices;
  const prompt = referencePrompt(ctx.prompt, {
    question: judgeQuestion(ctx.task, cfg.question_field),
    answer,
    response,
    positive,
    negative,
  });
  const result = await ctx.complete([{ role: "user", content: prompt }], {
    parse: (text) => judgeVerdict(text, cfg.choices) === positive ? 1 : 0,
  });
  return result.parsed as number;
}

/** The `reference` judge plugin. */
export default defineJudge({
  id: "reference",
  description: "LLM judge: does the reply match the task's reference answer? (yes/no)",
  config: referenceJudgeConfig,
  score: scoreReference,
});
