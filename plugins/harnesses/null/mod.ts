/**
 * The `null` harness: a plain chat loop on the host, no tools and no code execution.
 * The model answers the prompt; the conversation ends at the first reply.
 *
 * @module
 */
import { z } from "zod";
import { defineHarness, runChatLoop } from "../../../kit/mod.ts";

/** The `null` harness plugin. */
export default defineHarness({
  id: "null",
  description: "Plain chat loop on the host: no tools, no code execution.",
  config: z.object({}),
  capabilities: { executesCode: false, needsContainer: false, appendsSystemPrompt: true },
  launch(ctx) {
    return runChatLoop({
      endpoint: ctx.endpoint,
      secret: ctx.secret,
      model: ctx.model,
      messages: ctx.messages,
      signal: ctx.signal,
      log: ctx.log,
    });
  },
});
