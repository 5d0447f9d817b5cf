/**
 * Built-in host-side tools of the `bash` harness: `bash {command}` and
 * `edit {path, old_str, new_str}`. Both execute through the rollout's {@link Runtime}, so
 * they work the same on this machine and in remote sandboxes. A tool never throws for a
 * bad call: it answers with corrective text the model can act on.
 *
 * @module
 */
import type { Runtime } from "../runtime/runtime.ts";
import { errorMessage } from "../errors.ts";

/** A tool as advertised in an OpenAI chat completions request (`tools[]`). */
export interface ChatToolSpec {
  type: "function";
  function: {
    name: string;
    description: string;
    parameters: Record<string, unknown>;
  };
}

/** A tool the host-side chat loop executes. */
export interface HostTool {
  /** What the loop advertises to the model. */
  readonly spec: ChatToolSpec;
  /**
   * Runs one call with its parsed (object) arguments and returns the tool message text.
   * Bad arguments give corrective text; only runtime failures and aborts throw.
   */
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<string>;
}

/**
 * Thrown by a {@link HostTool} for a call that failed in a way the model should see: the
 * loop answers `Error: <message>` and records the error on the call. Any other throw ends
 * the loop.
 */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ToolError";
  }
}

/** One tool call as a host-side loop records it (`trace.info.tool_calls[]`). */
export interface ToolCallRecord {
  /** The model's tool call id. */
  id: string;
  /** The advertised tool name. */
  name: string;
  /** The arguments as the model sent them (JSON text). */
  arguments: string;
  /** What the model was answered. */
  result: string;
  /** Why the call failed (unknown tool, bad arguments, tool error), else null. */
  error: string | null;
  /** Seconds the call took. */
  duration: number;
}

/**
 * A chat loop's `onToolCall` that appends each record to `info.tool_calls` (the trace's
 * `info` a harness is handed); it records nothing when there is no info.
 */
export function toolCallRecorder(
  info: Record<string, unknown> | undefined,
): (record: ToolCallRecord) => void {
  return (record) => {
    if (!info) return;
    const list = Array.isArray(info.tool_calls) ? info.tool_calls : (info.tool_calls = []);
    (list as ToolCallRecord[]).push(record);
  };
}

/** Drops the tools named in `disabled` (Python's `disabled_tools`); null keeps all. */
export function withoutDisabled(tools: HostTool[], disabled: string[] | null): HostTool[] {
  if (!disabled || disabled.length === 0) return tools;
  const off = new Set(disabled);
  return tools.filter((t) => !off.has(t.spec.function.name));
}

/** First sentence of the `bash` harness system prompt. */
const BASH_PROMPT =
  "You are a coding agent. You have access to a bash tool for running shell commands.";

/** Sentence appended to {@link BASH_PROMPT} when the edit tool is on. */
const EDIT_PROMPT =
  " You also have an edit tool for single-occurrence string replacement in a file.";

/**
 * The `bash` harness system prompt: its own sentences, then a blank line and the task's
 * system prompt when there is a non-empty one.
 */
export function bashSystemPrompt(
  options: { edit: boolean },
  taskSystemPrompt?: string | null,
): string {
  const own = BASH_PROMPT + (options.edit ? EDIT_PROMPT : "");
  return taskSystemPrompt ? `${own}\n\n${taskSystemPrompt}` : own;
}

/** Options of {@link createBashTool}. */
export interface BashToolOptions {
  /** Kill a command after this many seconds. @default 3600 */
  timeoutS?: number;
  /** Cap the tool output at this many UTF-8 bytes; null keeps all. @default null */
  maxOutputBytes?: number | null;
}

/** Creates the `bash` tool: runs `bash -c <command>` in `runtime`; output = stdout then stderr. */
export function createBashTool(runtime: Runtime, options: BashToolOptions = {}): HostTool {
  const timeoutMs = (options.timeoutS ?? 3600) * 1000;
  const maxBytes = options.maxOutputBytes ?? null;
  return {
    spec: {
      type: "function",
      function: {
        name: "bash",
        description: "Run a shell command with bash and return its stdout followed by its stderr.",
        parameters: {
          type: "object",
          properties: {
            command: { type: "string", description: "The shell command to run." },
          },
          required: ["command"],
        },
      },
    },
    async run(args, signal) {
      const command = args.command;
      if (typeof command !== "string") {
        return "Error: the bash tool needs a string argument 'command'.";
      }
      const result = await runtime.run(["bash", "-c", command], { timeoutMs, signal });
      const output = result.stdout + result.stderr;
      return maxBytes === null ? output : capBytes(output, maxBytes);
    },
  };
}

/** Creates the `edit` tool: replaces `old_str` by `new_str` in a file when it occurs exactly once. */
export function createEditTool(runtime: Runtime): HostTool {
  return {
    spec: {
      type: "function",
      function: {
        name: "edit",
        description: "Replace one occurrence of old_str with new_str in a file. " +
          "old_str must occur exactly once in the file; include enough context to make it unique.",
        parameters: {
          type: "object",
          properties: {
            path: { type: "string", description: "Path of the file to edit." },
            old_str: { type: "string", description: "The exact text to replace (must be unique)." },
            new_str: { type: "string", description: "The replacement text." },
          },
          required: ["path", "old_str", "new_str"],
        },
      },
    },
    async run(args, signal) {
      const { path, old_str: oldStr, new_str: newStr } = args;
      if (typeof path !== "string" || typeof oldStr !== "string" || typeof newStr !== "string") {
        return "Error: the edit tool needs string arguments 'path', 'old_str' and 'new_str'.";
      }
      if (path === "") return "Error: 'path' must not be empty.";
      if (oldStr === "") return "Error: 'old_str' must not be empty.";
      let text: string;
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(await runtime.read(path));
      } catch (err) {
        signal.throwIfAborted();
        return `Error: cannot read ${path}: ${errorMessage(err)}`;
      }
      const count = text.split(oldStr).length - 1;
      if (count === 0) return `Error: old_str was not found in ${path}. No changes made.`;
      if (count > 1) {
        return `Error: old_str occurs ${count} times in ${path}; it must occur exactly once. ` +
          "Include more surrounding context to make it unique. No changes made.";
      }
      const at = text.indexOf(oldStr);
      const edited = text.slice(0, at) + newStr + text.slice(at + oldStr.length);
      try {
        await runtime.write(path, edited);
      } catch (err) {
        signal.throwIfAborted();
        return `Error: cannot write ${path}: ${errorMessage(err)}`;
      }
      return `Edited ${path}: replaced 1 occurrence of old_str.`;
    },
  };
}

/** Keeps the first `maxBytes` UTF-8 bytes of `text` (whole characters) plus a note. */
function capBytes(text: string, maxBytes: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // do not split a character (end < bytes.length here, so bytes[end] exists)
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;

  const head = new TextDecoder().decode(bytes.subarray(0, end));
  return `${head}\n[output truncated: showing ${end} of ${bytes.length} bytes]`;
}
