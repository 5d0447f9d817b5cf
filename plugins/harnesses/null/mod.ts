/**
 * The `null` harness: a plain chat loop on the host, no code execution. The model answers
 * the prompt; the conversation ends at the first reply without tool calls. Its only tools
 * are those of the rollout's MCP toolsets.
 *
 * @module
 */
import { z } from "zod";
import {
  defineHarness,
  hostToolKeys,
  runChatLoop,
  toolCallRecorder,
  toolsetHostTools,
  withoutDisabled,
} from "../../../kit/mod.ts";

/** The `null` harness plugin. */
export default defineHarness({
  id: "null",
  description: "Plain chat loop on the host: no code execution; MCP toolsets only.",
  config: z.object(hostToolKeys),
  capabilities: {
    executesCode: false,
    needsContainer: false,
    appendsSystemPrompt: true,
    toolsets: true,
  },
  launch(ctx) {
    const tools = withoutDisabled(
      toolsetHostTools(ctx.toolsets ?? [], { timeoutS: ctx.config.tool_timeout }),
      ctx.config.disabled_tools,
    );
    return runChatLoop({
      endpoint: ctx.endpoint,
      secret: ctx.secret,
      model: ctx.model,
      messages: ctx.messages,
      tools,
      signal: ctx.signal,
      log: ctx.log,
      onToolCall: toolCallRecorder(ctx.info),
    });
  },
});
