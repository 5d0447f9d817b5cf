/**
 * The `addition` taskset: an endless, seeded stream of `a + b` questions with `digits`-digit
 * operands. Infinite, so a run must bound it (`-n`). Task `idx` draws operands from
 * {@link seededRandom}(seed) in order: `a` then `b`, each uniform in
 * `[10^(digits-1), 10^digits - 1]` (`[0, 9]` for one digit). Reward `correct`: the last number
 * of the reply equals the sum.
 *
 * @module
 */
import { z } from "zod";
import {
  defineTaskset,
  lastNumber,
  lastReply,
  seededRandom,
  type TaskData,
} from "../../../kit/mod.ts";

/** The `addition` taskset's own config keys. */
const additionConfig = z.object({
  seed: z.number().int().default(0).describe("Seed of the question generator"),
  digits: z.number().int().min(1).max(15).default(3).describe("Digits per operand (1-15)"),
});

/** The system prompt of every addition task. */
export const ADDITION_SYSTEM_PROMPT = "Answer with the final number only.";

/** Generates addition tasks forever from a seed. */
export function* additionTasks(seed: number, digits: number): Generator<TaskData> {
  const rand = seededRandom(seed);
  const lo = digits === 1 ? 0 : 10 ** (digits - 1);
  const span = 10 ** digits - lo;
  for (let idx = 0;; idx++) {
    const a = lo + Math.floor(rand() * span);
    const b = lo + Math.floor(rand() * span);
    yield {
      idx,
      prompt: `What is ${a} + ${b}?`,
      system_prompt: ADDITION_SYSTEM_PROMPT,
      answer: String(a + b),
    };
  }
}

/** The `addition` taskset plugin. */
export default defineTaskset({
  id: "addition",
  description: "Endless seeded a + b questions (infinite: bound it with -n)",
  config: additionConfig,
  infinite: true,
  needsContainer: false,
  load({ seed, digits }) {
    return additionTasks(seed, digits);
  },
  solution: (task) => ({ text: String(task.answer) }),
  rewards: {
    correct: {
      fn: (ctx) => (lastNumber(lastReply(ctx.trace)) === Number(ctx.task.answer) ? 1 : 0),
    },
  },
});
