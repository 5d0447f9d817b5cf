/**
 * The `bash` harness: a chat loop on the host whose `bash` (and optional `edit`) tool calls
 * run in the rollout's runtime, so it needs nothing installed there but bash. The tools of
 * the rollout's MCP toolsets are offered next to them.
 *
 * @module
 */
import { z } from "zod";
import {
  bashSystemPrompt,
  createBashTool,
  createEditTool,
  defineHarness,
  type HostTool,
  hostToolKeys,
  type Message,
  promptText,
  runChatLoop,
  toolCallRecorder,
  toolsetHostTools,
  withoutDisabled,
} from "../../../kit/mod.ts";

const config = z.object({
  command_timeout: z.number().positive().default(3600).describe(
    "Seconds after which one bash tool command is killed.",
  ),
  edit: z.boolean().default(true).describe(
    "Offer the edit tool (single-occurrence string replacement in a file).",
  ),
  max_output_bytes: z.number().int().positive().nullable().default(null).describe(
    "Cap each bash tool output at this many bytes (null: no cap).",
  ),
  ...hostToolKeys,
});

/** The `bash` harness plugin. */
export default defineHarness({
  id: "bash",
  description: "Chat loop on the host with bash and edit tools executed in the runtime.",
  config,
  capabilities: {
    executesCode: true,
    needsContainer: false,
    appendsSystemPrompt: true,
    toolsets: true,
  },
  launch(ctx) {
    const cfg = ctx.config;
    const own: HostTool[] = [
      createBashTool(ctx.runtime, {
        timeoutS: cfg.command_timeout,
        maxOutputBytes: cfg.max_output_bytes,
      }),
    ];
    if (cfg.edit) own.push(createEditTool(ctx.runtime));
    const mcp = toolsetHostTools(ctx.toolsets ?? [], {
      timeoutS: cfg.tool_timeout,
      reserved: own.map((t) => t.spec.function.name),
    });
    const tools = withoutDisabled([...own, ...mcp], cfg.disabled_tools);
    const edit = tools.some((t) => t.spec.function.name === "edit");
    return runChatLoop({
      endpoint: ctx.endpoint,
      secret: ctx.secret,
      model: ctx.model,
      messages: withSystemPrompt(ctx.messages, edit),
      tools,
      signal: ctx.signal,
      log: ctx.log,
      toolHooks: true,
      onToolCall: toolCallRecorder(ctx.info),
    });
  },
});

/** Puts the harness's own sentences in front of the task system prompt (one system message). */
function withSystemPrompt(messages: Message[], edit: boolean): Message[] {
  const first = messages[0];
  if (first?.role === "system") {
    const task = typeof first.content === "string" ? first.content : promptText([first]);
    return [{ role: "system", content: bashSystemPrompt({ edit }, task) }, ...messages.slice(1)];
  }
  return [{ role: "system", content: bashSystemPrompt({ edit }) }, ...messages];
}
