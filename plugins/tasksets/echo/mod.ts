/**
 * The `echo` taskset: the model repeats a short phrase back (Python's `echo_v1` fixture).
 * Reward `echoed`: the casefolded letters and digits of the phrase occur in the reply's.
 *
 * @module
 */
import { z } from "zod";
import {
  defineTaskset,
  lastReply,
  normalizeText,
  numTurns,
  type TaskData,
} from "../../../kit/mod.ts";

/** The phrases, in task order. */
export const ECHO_PHRASES: readonly string[] = ["hello world", "ping", "verifiers"];

/** The system prompt of every echo task. */
export const ECHO_SYSTEM_PROMPT =
  "Repeat the user's message back to them exactly, with no extra words.";

/** True when the reply contains the phrase, compared casefolded on letters and digits. */
export function echoed(reply: string, phrase: string): boolean {
  const needle = normalizeText(phrase);
  return needle !== "" && normalizeText(reply).includes(needle);
}

/** The `echo` taskset plugin. */
export default defineTaskset({
  id: "echo",
  description: "Repeat a short phrase back (smoke test)",
  config: z.object({}),
  needsContainer: false,
  load: () =>
    ECHO_PHRASES.map((phrase, idx): TaskData => ({
      idx,
      prompt: phrase,
      system_prompt: ECHO_SYSTEM_PROMPT,
      answer: phrase,
    })),
  key: (task) => `echo:${String(task.answer)}`,
  solution: (task) => ({ text: String(task.answer) }),
  rewards: {
    echoed: { fn: (ctx) => (echoed(lastReply(ctx.trace), String(ctx.task.answer)) ? 1 : 0) },
  },
  stops: {
    single_turn: { fn: (ctx) => numTurns(ctx.trace) >= 1 },
  },
});
