/**
 * The `reverse-text` taskset: reverse a sentence character by character and answer inside
 * `<reversed_text>` tags. Reward `lcs`: `difflib.SequenceMatcher` ratio of the tag content
 * (empty when missing) against the reversed sentence, as in Python's `reverse_text`.
 *
 * @module
 */
import { z } from "zod";
import { defineTaskset } from "../../../lib/plugins/contract.ts";
import { extractTag } from "../../../lib/scoring/extract.ts";
import { sequenceRatio } from "../../../lib/scoring/sequence_matcher.ts";
import type { TaskData } from "../../../lib/tasks/task_data.ts";
import { lastReply } from "../../../lib/trace/derived.ts";
import { SENTENCES } from "./data.ts";

/** The system prompt of every reverse-text task. */
export const REVERSE_SYSTEM_PROMPT =
  "Reverse the given text character by character, so the last character comes first. " +
  "Write your answer inside <reversed_text> and </reversed_text> tags.";

/** Reverses a string by code point. */
export function reverseText(text: string): string {
  return Array.from(text).reverse().join("");
}

/** The `lcs` reward: similarity of the `<reversed_text>` content to the answer, in [0, 1]. */
export function lcsReward(reply: string, answer: string): number {
  return sequenceRatio(extractTag(reply, "reversed_text") ?? "", answer);
}

/** The `reverse-text` taskset plugin. */
export default defineTaskset({
  id: "reverse-text",
  description: "Reverse a sentence inside <reversed_text> tags (LCS-ratio reward)",
  config: z.object({}),
  needsContainer: false,
  load: () =>
    SENTENCES.map((text, idx): TaskData => ({
      idx,
      prompt: text,
      system_prompt: REVERSE_SYSTEM_PROMPT,
      answer: reverseText(text),
    })),
  solution: (task) => ({ text: `<reversed_text>\n${String(task.answer)}\n</reversed_text>` }),
  rewards: {
    lcs: { fn: (ctx) => lcsReward(lastReply(ctx.trace), String(ctx.task.answer)) },
  },
});
