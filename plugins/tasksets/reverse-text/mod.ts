/**
 * The `reverse-text` taskset, defined as Python's `reverse-text` environment
 * (environments/reverse_text/reverse_text/taskset.py@a60a606): the same system prompt,
 * task data (`idx`, `prompt`, `system_prompt`, `answer`), `single_turn` stop, default
 * harness and reward `lcs` — the `difflib.SequenceMatcher` ratio of the stripped
 * `<reversed_text>` content (empty when missing) against the reversed prompt. The rows
 * differ: Python loads the Hub dataset `PrimeIntellect/Reverse-Text-RL`, this one ships
 * bundled sentences (no network), so only runs on the same rows compare.
 *
 * @module
 */
import { z } from "zod";
import {
  defineTaskset,
  lastReply,
  numTurns,
  sequenceRatio,
  type TaskData,
} from "../../../kit/mod.ts";
import { SENTENCES } from "./data.ts";

/** The system prompt of every reverse-text task (Python's `SYSTEM`). */
const REVERSE_SYSTEM_PROMPT =
  "Reverse the text character-by-character. Put your answer in <reversed_text> tags.";

/** Python's default dataset: the only value accepted (its rows are not fetched). */
const PYTHON_DATASET = "PrimeIntellect/Reverse-Text-RL";

/** Reverses a string by code point. */
export function reverseText(text: string): string {
  return Array.from(text).reverse().join("");
}

/** The `lcs` reward: similarity of the `<reversed_text>` content to the answer, in [0, 1]. */
function lcsReward(reply: string, answer: string): number {
  // Python: the first `<reversed_text>(.*?)</reversed_text>` match (DOTALL), stripped.
  const match = /<reversed_text>([\s\S]*?)<\/reversed_text>/.exec(reply);
  return sequenceRatio(match?.[1]?.trim() ?? "", answer);
}

/** The `reverse-text` taskset plugin. */
export default defineTaskset({
  id: "reverse-text",
  description: "Reverse a sentence inside <reversed_text> tags (LCS-ratio reward)",
  config: z.object({
    dataset_name: z.literal(PYTHON_DATASET, {
      error: () =>
        `only "${PYTHON_DATASET}" is accepted (Python's default); its rows are not fetched — ` +
        "verifiers-ts uses its bundled sentences",
    }).default(PYTHON_DATASET).describe(
      "Python's dataset id (accepted for config exchange; the rows are the bundled sentences)",
    ),
    dataset_split: z.literal("train").default("train").describe(
      "Python's split (see dataset_name)",
    ),
  }),
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
  stops: {
    // Single-turn, as Python's `ReverseTextTask.single_turn`.
    single_turn: { fn: (ctx) => numTurns(ctx.trace) >= 1 },
  },
});
