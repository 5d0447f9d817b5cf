/**
 * The `match` judge: deterministic scoring of the last reply against the task's answer
 * (no model call). Modes and extractors are described in `kit/scoring/match.ts`.
 *
 * @module
 */
import { z } from "zod";
import {
  defineJudge,
  EXTRACTOR_RE,
  type JudgeContext,
  lastReply,
  matchAnswer,
  TaskError,
} from "../../../kit/mod.ts";

/** The `match` judge's own config keys. */
export const matchJudgeConfig = z.object({
  mode: z.enum(["exact", "normalized", "contains", "numeric", "regex"]).default("normalized")
    .describe(
      "How to compare: exact (trimmed), normalized (casefold, letters and digits only), " +
        "contains (normalized answer inside the reply), numeric (within tolerance), " +
        "regex (the answer is a pattern searched in the reply)",
    ),
  extract: z.string()
    .regex(EXTRACTOR_RE, "expected none, boxed, tag:<name>, last_line or last_number")
    .default("none")
    .describe(
      "What part of the reply to compare: none (all of it), boxed (last \\boxed{}), " +
        "tag:<name> (last <name>...</name>), last_line, last_number; nothing found scores 0",
    ),
  answer_field: z.string().min(1).default("answer").describe(
    "Task field holding the reference answer; a list means any of its items",
  ),
  tolerance: z.number().nonnegative().default(1e-6).describe(
    "numeric mode: accept |reply - answer| <= tolerance * max(1, |answer|) " +
      "(absolute below 1, relative above)",
  ),
  case_sensitive: z.boolean().default(true).describe(
    "exact and regex modes: compare case-sensitively",
  ),
  missing: z.enum(["error", "skip"]).default("error").describe(
    "A task without the answer field: error (a TaskError on the trace) or skip (no score recorded)",
  ),
});

/** The resolved config of a `match` judge entry. */
export type MatchJudgeConfig = z.infer<typeof matchJudgeConfig>;

/**
 * Scores one trace: 1 when its last reply matches the task's answer field, else 0;
 * `{}` (no score) for a task without the field when `missing = "skip"`.
 */
function scoreMatch(
  ctx: Pick<JudgeContext<MatchJudgeConfig>, "judge" | "task" | "trace">,
): 0 | 1 | Record<string, never> {
  const cfg = ctx.judge;
  const answer = ctx.task[cfg.answer_field];
  if (answer === undefined || answer === null) {
    if (cfg.missing === "skip") return {};
    throw new TaskError(`match judge: task has no '${cfg.answer_field}' field`, {
      hint: "set answer_field to the task field that holds the reference answer",
    });
  }
  return matchAnswer(lastReply(ctx.trace), answer, {
    mode: cfg.mode,
    extract: cfg.extract,
    tolerance: cfg.tolerance,
    caseSensitive: cfg.case_sensitive,
  });
}

/** The `match` judge plugin. */
export default defineJudge({
  id: "match",
  description: "Deterministic answer match (exact, normalized, contains, numeric, regex)",
  config: matchJudgeConfig,
  score: (ctx) => Promise.resolve().then(() => scoreMatch(ctx)),
});
