/**
 * The `single-agent` env, the one every run uses unless `env.id` names another: one run
 * of the `agent` role per episode (verifiers/v1/envs/single_agent/env.py@a60a606).
 *
 * @module
 */
import { z } from "zod";
import { defineEnv } from "../../../kit/mod.ts";

/** The single-agent env. */
export default defineEnv({
  id: "single-agent",
  description: "One agent, one rollout per episode (the default env)",
  config: z.object({}),
  run: async ({ agents }) => {
    await agents.agent.run();
  },
});
