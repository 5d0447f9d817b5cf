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

/**
 * What a task needs of its runtime (Python `TaskResources`): CPU cores, memory and disk in
 * GB, a GPU spec ("A100", "A100:2", "2"; a bare count may be a number). A value the runtime
 * config set wins.
 */
export interface TaskResources {
  cpu?: number | null;
  memory?: number | null;
  gpu?: string | number | null;
  disk?: number | null;
}

/** One task's data. Tasksets add their own fields (e.g. `answer`). */
export interface TaskData {
  idx?: number;
  name?: string | null;
  description?: string | null;
  prompt: string | Message[] | null;
  system_prompt?: string | null;
  timeout?: TaskTimeout | null;
  /** The container image the task runs in (container runtimes only). */
  image?: string | null;
  /** The working directory inside the container (while the runtime's is its default). */
  workdir?: string | null;
  /** Resources the task needs (applied where the runtime has the key at its default). */
  resources?: TaskResources | null;
  /** Destinations the task may reach: `["*"]` (the default) leaves the runtime's allowlist. */
  network_allow?: string[];
  /** Destinations denied to the task, added to the runtime's blocklist. */
  network_block?: string[];
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
