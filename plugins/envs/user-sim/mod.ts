/**
 * The `user-sim` env: a simulated user, itself a model, talks to the assistant under
 * evaluation turn by turn (verifiers/v1/envs/user_sim/env.py@a60a606). The task's prompt
 * is the user's scenario, placed in the user's system prompt (`env.persona`); the
 * assistant plays the same task with its prompt taken away, so it learns the goal only
 * from the conversation, and its trace is scored by the task's own rewards. The
 * assistant greets, the user answers, and so on, until the user replies with exactly
 * `env.done_marker` or either side stops (the user's `max_turns`, 8 by default, caps the
 * exchange). Both sides' traces join the episode, the user's untrainable; the assistant's
 * gets metric `user_turns`.
 *
 * @module
 */
import { z } from "zod";
import { defineEnv, numTurns, promptText, recordMetric, type TaskData } from "../../../kit/mod.ts";

/** Python's default persona; `{scenario}` and `{done}` are replaced as plain text. */
export const PERSONA = `You are role-playing a USER talking to an AI assistant. This is your \
situation — what you want the ASSISTANT to do for you:

{scenario}

Rules:
- Open the conversation with your request, in your own words.
- Stay in character: short, natural user messages; never act as the assistant.
- The assistant does the work, not you: never perform the task yourself — any tool call, \
answer, or output format it asks for must come from the assistant; ask for it instead.
- Reveal details only when asked, as a real user would.
- When the assistant has fully met your goal — or you are convinced it cannot — reply with \
exactly {done} and nothing else.`;

/** The assistant's opening line, seen by the user only (the tau convention). */
export const GREETING = "Hello! How can I help you today?";

/** The user-sim env's own keys. */
export const userSimConfig = z.object({
  persona: z.string().default(PERSONA).describe(
    "The user's system prompt; {scenario} is the task's prompt text, {done} the done marker",
  ),
  done_marker: z.string().min(1).default("###DONE###").describe(
    "The user ends the conversation by replying with exactly this",
  ),
});

/** The user-sim env. */
export default defineEnv({
  id: "user-sim",
  className: "UserSimEnv",
  description: "A simulated user model talks to the assistant turn by turn",
  config: userSimConfig,
  roles: {
    assistant: { description: "The agent under evaluation" },
    user: {
      description: "The simulated user (the null harness; max_turns caps the conversation)",
      defaults: { harness: { id: "null" }, max_turns: 8 },
    },
  },
  run: async ({ task, agents, config }) => {
    const system = config.persona.replaceAll("{done}", config.done_marker)
      .replaceAll("{scenario}", task.prompt ? promptText(task.prompt) : "");
    const userTask: TaskData = {
      ...(task.idx === undefined ? {} : { idx: task.idx }),
      prompt: null,
      system_prompt: system,
    };
    const user = await agents.user!.interaction({ task: userTask, trainable: false });
    try {
      const assistant = await agents.assistant!.interaction({ override: { prompt: null } });
      try {
        let ask = await user.turn(GREETING);
        while (!ask.terminated && ask.lastReply.trim() !== config.done_marker) {
          const answer = await assistant.turn(ask.lastReply);
          if (answer.terminated) break;
          ask = await user.turn(answer.lastReply);
        }
      } finally {
        await assistant.close();
      }
    } finally {
      await user.close();
    }
  },
  finalize: ({ traces }) => {
    const user = traces.find((t) => t.agent.name === "user");
    const turns = user ? numTurns(user) : 0;
    for (const t of traces) if (t.agent.name === "assistant") recordMetric(t, "user_turns", turns);
    return Promise.resolve();
  },
});
