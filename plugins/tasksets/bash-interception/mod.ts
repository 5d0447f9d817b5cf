/**
 * The `bash-interception` taskset (Python's `bash_interception` environment,
 * environments/bash_interception@a60a606): both outcomes of a bash call the task intercepts.
 * Task 0: a response stop ends the rollout on the proposed `touch` before the harness sees
 * it, so the command never runs. Task 1: a request hook fills the pre-execution result of
 * the `git` call, so the agent gets that text instead of running it, and goes on.
 *
 * @module
 */
import { z } from "zod";
import {
  defineTaskset,
  type InterceptedRequest,
  lastMessages,
  type Message,
  numTurns,
  type TaskData,
  type ToolCall,
} from "../../../kit/mod.ts";

export const STOP_SENTINEL = "bash-tool-executed";
export const STOP_COMMAND = `touch ${STOP_SENTINEL}`;
export const REWRITE_SENTINEL = "git-tool-executed";
export const REWRITE_COMMAND = `git --version && touch ${REWRITE_SENTINEL}`;
/** The result a blocked call gets instead of running. */
export const BLOCKED = "This request is blocked. You should answer with something.";

/** The prompts, in task order (Python's, word for word). */
export const PROMPTS: readonly string[] = [
  `Use bash once to run \`${STOP_COMMAND}\`, then stop.`,
  `Use bash exactly once to run \`${REWRITE_COMMAND}\`. Whatever the tool ` +
  "returns, do not call another tool; answer with something.",
];

/** The message's `bash` call whose command contains `snippet`, if any. */
export function bashCall(message: Message | undefined, snippet: string): ToolCall | null {
  if (message?.role !== "assistant") return null;
  for (const call of message.tool_calls ?? []) {
    if (call.name !== "bash") continue;
    let args: unknown;
    try {
      args = JSON.parse(call.arguments);
    } catch {
      continue;
    }
    const command = (args as { command?: unknown } | null)?.command;
    if (typeof command === "string" && command.includes(snippet)) return call;
  }
  return null;
}

/** Fills the empty (pre-execution) result of task 1's git call. */
function rewriteGit(request: InterceptedRequest, idx: unknown): InterceptedRequest | null {
  const messages = request.messages;
  const result = messages[messages.length - 1];
  if (idx !== 1 || result?.role !== "tool" || result.content !== "") return null;
  const assistant = messages.slice(0, -1).reverse().find((m) =>
    m.role === "assistant" && (m.tool_calls ?? []).some((c) => c.id === result.tool_call_id)
  );
  const call = bashCall(assistant, REWRITE_SENTINEL);
  if (call === null || call.id !== result.tool_call_id) return null;
  return { ...request, messages: [...messages.slice(0, -1), { ...result, content: BLOCKED }] };
}

async function exists(
  runtime: { run(argv: string[], o: object): Promise<{ exitCode: number }> },
  path: string,
) {
  return (await runtime.run(["test", "-e", path], {})).exitCode === 0;
}

/** The `bash-interception` taskset plugin. */
export default defineTaskset({
  id: "bash-interception",
  description: "A response stop and a tool-result rewrite around bash calls (interception demo)",
  config: z.object({}),
  taskType: "BashInterceptionTask",
  load: () => PROMPTS.map((prompt, idx): TaskData => ({ idx, prompt })),
  solution: (task) => ({
    commands: [task.idx === 0 ? STOP_COMMAND : REWRITE_COMMAND],
    text: "Done.",
  }),
  stops: {
    stop_bash: {
      on: "response",
      fn: (response, ctx) =>
        ctx.task.idx === 0 && bashCall(response.message, STOP_COMMAND) !== null,
    },
  },
  intercepts: {
    rewrite_git: { on: "request", fn: (request, ctx) => rewriteGit(request, ctx.task.idx) },
  },
  rewards: {
    rewritten: {
      needsRuntime: true,
      fn: async (ctx) => {
        const zero = ctx.task.idx === 0;
        const executed = await exists(ctx.runtime!, zero ? STOP_SENTINEL : REWRITE_SENTINEL);
        if (zero) return !executed && ctx.trace.stop_condition === "stop_bash" ? 1 : 0;
        const tools = lastMessages(ctx.trace).filter((m) => m.role === "tool");
        const last = tools[tools.length - 1];
        return !executed && last !== undefined &&
            String(last.content).includes("This request is blocked") &&
            numTurns(ctx.trace) === 2
          ? 1
          : 0;
      },
    },
  },
});
