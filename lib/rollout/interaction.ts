/**
 * An interaction: one rollout whose caller plays the other side of the conversation, as
 * Python's `Agent.interaction(task)` / `Interaction.turn(msg)` (verifiers/v1/agent.py
 * @a60a606). The runtime is started and set up once; each turn appends the caller's
 * message and relaunches the harness on the whole conversation (Python's default
 * `Harness.resume`), under what is left of the agent budget; closing finalizes, scores
 * and tears down as any rollout. One trace carries every turn.
 *
 * @module
 */
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { Message, Trace, TraceTask } from "../../kit/trace/types.ts";
import { lastReply } from "../../kit/trace/derived.ts";
import type { RolloutPlan } from "./rollout_plan.ts";
import { closeRollout, type OpenRollout, openRollout, recordStageError } from "./rollout.ts";
import { runAgent } from "./agent_stage.ts";

/** What one turn gave back. */
export interface Segment {
  /** The agent's last reply of the turn ("" when it gave none). */
  lastReply: string;
  /** True when the rollout stopped for good (a limit, an error): no turn follows. */
  terminated: boolean;
}

/** A live interaction. */
export interface Interaction {
  /** Sends the caller's message and resolves when the agent's turn is over. */
  turn(message: string): Promise<Segment>;
  /** Leaves the interaction (`user_closed` unless it stopped) and resolves with the trace. */
  close(): Promise<Trace>;
}

/** The conversation's opening: the task's system prompt and prompt, when it has them. */
function opening(task: TaskData, appendsSystemPrompt: boolean): Message[] {
  const out: Message[] = [];
  if (task.system_prompt && appendsSystemPrompt) {
    out.push({ role: "system", content: task.system_prompt });
  }
  if (typeof task.prompt === "string") out.push({ role: "user", content: task.prompt });
  else if (Array.isArray(task.prompt)) out.push(...structuredClone(task.prompt));
  return out;
}

/** Folds the system prompt into the first user message, for a harness that takes none. */
function folded(task: TaskData, messages: Message[]): Message[] {
  const system = task.system_prompt;
  const first = messages[0];
  if (!system || !first || first.role !== "user" || typeof first.content !== "string") {
    return messages;
  }
  return [{ role: "user", content: `${system}\n\n${first.content}` }, ...messages.slice(1)];
}

/** Opens an interaction with `plan`'s agent on `task`. */
export async function openInteraction(
  plan: RolloutPlan,
  task: TaskData,
  identity: TraceTask,
  signal: AbortSignal,
): Promise<Interaction> {
  const open: OpenRollout = await openRollout(plan, task, identity, signal);
  const { trace } = open;
  const appends = plan.harness.capabilities.appendsSystemPrompt;
  const conversation = opening(task, appends);
  let spent = 0;
  let closed: Promise<Trace> | null = null;
  const stopped = () => trace.errors.length > 0 || trace.stop_condition !== null;
  return {
    async turn(message) {
      if (closed) throw new Error("the interaction is closed");
      if (stopped() || !open.runtime) return { lastReply: "", terminated: true };
      conversation.push({ role: "user", content: message });
      const budget = open.timeouts.agent === null ? null : open.timeouts.agent - spent;
      const started = Date.now();
      try {
        const messages = appends ? conversation : folded(task, conversation);
        await runAgent(plan, trace, task, open.runtime, messages, budget, signal, open.ctxFor);
      } catch (err) {
        recordStageError(trace, err);
      } finally {
        spent += (Date.now() - started) / 1000;
      }
      // a clean exit ends the turn, not the interaction
      if (trace.stop_condition === "agent_completed") trace.stop_condition = null;
      const reply = lastReply(trace);
      conversation.push({ role: "assistant", content: reply });
      return { lastReply: reply, terminated: stopped() };
    },
    close() {
      closed ??= (async () => {
        if (trace.stop_condition === null && trace.errors.length === 0) {
          trace.stop_condition = "user_closed";
        }
        return await closeRollout(plan, open, signal);
      })();
      return closed;
    },
  };
}
