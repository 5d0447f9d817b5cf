/**
 * The `best-of-n` env: `env.n` independent attempts at each task by the `agent` role,
 * each scored by the task's own rewards, then compared across the siblings: metric
 * `best` is 1 on every attempt whose reward is the highest (ties share it) and
 * `pass_at_n` is 1 on all of them when any reached `env.threshold`
 * (verifiers/v1/envs/best_of_n/env.py@a60a606). The attempts run one after another, as
 * Python runs an episode's agents by default (`env.max_concurrent_agents = 1`).
 *
 * @module
 */
import { z } from "zod";
import { defineEnv, recordMetric, traceReward } from "../../../kit/mod.ts";

/** The best-of-n env's own keys (`env.n`, `env.threshold`). */
export const bestOfNConfig = z.object({
  n: z.number().int().min(1).default(4).describe("Independent attempts per episode"),
  threshold: z.number().default(1).describe(
    "Reward at which an attempt counts as solved (pass_at_n)",
  ),
});

/** The best-of-n env. */
export default defineEnv({
  id: "best-of-n",
  className: "BestOfNEnv",
  description: "n attempts at each task, the best marked and pass@n recorded on each",
  config: bestOfNConfig,
  run: async ({ agents, config }) => {
    for (let i = 0; i < config.n; i++) await agents.agent.run();
  },
  finalize: ({ traces, config }) => {
    const top = Math.max(...traces.map(traceReward));
    const solved = top >= config.threshold ? 1 : 0;
    for (const trace of traces) {
      recordMetric(trace, "best", traceReward(trace) === top ? 1 : 0);
      recordMetric(trace, "pass_at_n", solved);
    }
    return Promise.resolve();
  },
});
