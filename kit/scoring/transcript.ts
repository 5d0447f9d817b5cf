/**
 * What an LLM judge reads of a rollout: the final reply, or a text transcript of the
 * conversation (Python `Trace.last_reply` / `Trace.transcript`), plus the task's question
 * and reference answer by field name.
 *
 * @module
 */
import { TaskError } from "../errors.ts";
import { promptText, type TaskData } from "../tasks/task_data.ts";
import { lastMessages } from "../trace/derived.ts";
import type { ContentPart, Trace } from "../trace/types.ts";

/** How much of a rollout a judge sees: the final reply or the whole transcript. */
export type JudgeView = "last_reply" | "full_trace";

/** The judge views, for config schemas. */
export const JUDGE_VIEWS = ["last_reply", "full_trace"] as const;

/** The text parts of a message content, one per line (images are left out). */
export function contentText(content: string | ContentPart[] | null | undefined): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content.filter((p) => p.type === "text").map((p) => (p as { text: string }).text).join(
    "\n",
  );
}

/**
 * The model's final reply: the content of the last sampled assistant message (any
 * branch), trimmed; "" when there is none.
 */
export function finalReply(trace: Pick<Trace, "nodes">): string {
  const m = trace.nodes.findLast((n) => n.sampled && n.message.role === "assistant")?.message;
  return m?.role === "assistant" ? (m.content ?? "").trim() : "";
}

/**
 * A text transcript of the last branch: one block per message, blocks separated by a
 * blank line. A block starts with `[role]` (`[tool <name>]` for a named tool result),
 * then the text; an assistant block lists its tool calls as `[tool_call name(args)]`.
 * Reasoning is never included.
 */
export function transcript(trace: Pick<Trace, "nodes">): string {
  const blocks: string[] = [];
  for (const m of lastMessages(trace)) {
    const lines = [`[${m.role}]`];
    if (m.role === "assistant") {
      if (m.content) lines.push(m.content);
      for (const call of m.tool_calls ?? []) {
        lines.push(`[tool_call ${call.name}(${call.arguments})]`);
      }
    } else {
      if (m.role === "tool" && m.name) lines[0] = `[tool ${m.name}]`;
      const text = contentText(m.content);
      if (text) lines.push(text);
    }
    blocks.push(lines.join("\n"));
  }
  return blocks.join("\n\n");
}

/** What fills a judge's `{response}`: the final reply or the transcript. */
export function judgeResponse(trace: Pick<Trace, "nodes">, view: JudgeView): string {
  return view === "full_trace" ? transcript(trace) : finalReply(trace);
}

function fieldText(value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

/**
 * What fills a judge's `{question}`: the task field `questionField`, or (when empty) the
 * task's prompt as text. A missing field or an empty prompt is a `TaskError`.
 */
export function judgeQuestion(task: TaskData, questionField: string): string {
  if (!questionField) {
    const text = promptText(task.prompt);
    if (!text) {
      throw new TaskError("judge found no question: this task has no prompt", {
        hint: "point `question_field` at the task field holding the question",
      });
    }
    return text;
  }
  const value = task[questionField];
  if (value === undefined || value === null) {
    throw new TaskError(`judge found no '${questionField}' field on the task`, {
      hint: "point `question_field` at the task's question field, or leave it empty for the " +
        "task prompt",
    });
  }
  return fieldText(value);
}

/**
 * The task's reference answer from `answerField`; a list is joined one item per line
 * (any of them is acceptable). A missing field is a `TaskError` naming the judge.
 */
export function judgeAnswer(task: TaskData, answerField: string, judge: string): string {
  const value = task[answerField];
  if (value === undefined || value === null) {
    throw new TaskError(`${judge} judge found no '${answerField}' field on the task`, {
      hint: "point `answer_field` at the task's reference-answer field",
    });
  }
  return Array.isArray(value) ? value.map(fieldText).join("\n") : fieldText(value);
}
