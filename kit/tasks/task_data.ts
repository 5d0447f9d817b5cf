/**
 * Task data: the frozen, serializable half of a task (Python `TaskData`).
 *
 * @module
 */
import type { Message } from "../trace/types.ts";

/** Per-task stage timeouts in seconds (null = none). */
export interface TaskTimeout {
  setup?: number | null;
  agent?: number | null;
  finalize?: number | null;
  scoring?: number | null;
}

/** One task's data. Tasksets add their own fields (e.g. `answer`). */
export interface TaskData {
  idx?: number;
  name?: string | null;
  description?: string | null;
  prompt: string | Message[] | null;
  system_prompt?: string | null;
  timeout?: TaskTimeout | null;
  [field: string]: unknown;
}

/** The text of a prompt: a string, or the text parts of its messages joined by blank lines. */
export function promptText(prompt: TaskData["prompt"]): string {
  if (prompt === null || prompt === undefined) return "";
  if (typeof prompt === "string") return prompt;
  const parts: string[] = [];
  for (const m of prompt) {
    const c = (m as { content?: unknown }).content;
    if (typeof c === "string") parts.push(c);
    else if (Array.isArray(c)) {
      for (const p of c) if (p && p.type === "text") parts.push(p.text);
    }
  }
  return parts.join("\n\n");
}
