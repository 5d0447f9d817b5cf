/**
 * Reading OpenAI chat completions in the trace's terms: chat messages into the trace's own
 * {@link Message}, the model/sampling overrides, the recorded sampling whitelist, usage,
 * finish reasons and tool specs. The wire shapes themselves are in kit/wire/chat.ts; streams
 * in stream.ts; the dialect in mod.ts; the context-length error in ../context_length.ts.
 *
 * @module
 */
import type { ContentPart, Message, ToolCall, ToolSpec, Usage } from "../../../kit/trace/types.ts";
import { isRecord } from "../../../kit/util/is_record.ts";
import type { ChatMessage, ChatRequestBody } from "../../../kit/wire/chat.ts";
import type { DialectOutcome } from "../../../kit/wire/dialect.ts";

/** Settings recorded in `ModelCall.sampling` when present in the body sent upstream. */
const CHAT_SAMPLING_KEYS: readonly string[] = [
  "temperature",
  "top_p",
  "max_tokens",
  "max_completion_tokens",
  "reasoning_effort",
  "seed",
  "stop",
  "frequency_penalty",
  "presence_penalty",
  "n",
];

/** The value when it is a string, else null. */
export function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** The value when it is a finite number, else 0. */
export function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function optionalNum(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The finish reasons a trace records (`FinishReason`, verifiers/v1/types.py@a60a606). */
const FINISH_REASONS: readonly string[] = ["stop", "length", "tool_calls"];

/** A provider's finish reason as the trace records it: anything else becomes null. */
export function normalizeFinishReason(
  reason: string | null,
): "stop" | "length" | "tool_calls" | null {
  return reason !== null && FINISH_REASONS.includes(reason)
    ? reason as "stop" | "length" | "tool_calls"
    : null;
}

/**
 * Applies the run's overrides to a program's body: the model always replaced, then every
 * non-null sampling key (extras included) overlaid. Returns a new object.
 */
export function applyChatOverrides(
  body: ChatRequestBody,
  model: string,
  sampling: Record<string, unknown>,
): ChatRequestBody {
  const out: ChatRequestBody = { ...body, model };
  for (const key of Object.keys(sampling)) {
    const value = sampling[key];
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out;
}

/**
 * The settings to record for a call: whitelisted keys plus the run's own sampling keys,
 * taken from the body actually sent upstream.
 */
export function recordedSampling(
  sentBody: Record<string, unknown>,
  runSampling: Record<string, unknown>,
): Record<string, unknown> {
  // the whitelist in its order, then the run's own keys: no set or joined list per call
  const out: Record<string, unknown> = {};
  for (const key of CHAT_SAMPLING_KEYS) {
    if (key in sentBody && sentBody[key] !== undefined) out[key] = sentBody[key];
  }
  for (const key of Object.keys(runSampling)) {
    if (!(key in out) && key in sentBody && sentBody[key] !== undefined) out[key] = sentBody[key];
  }
  return out;
}

/**
 * Parses a chat `usage` object: prompt tokens exclude cached ones, cached and reasoning
 * tokens come from the `*_details` objects. Null when there is no usage.
 */
export function parseChatUsage(raw: unknown): Usage | null {
  if (!isRecord(raw)) return null;
  const promptDetails = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const completionDetails = isRecord(raw.completion_tokens_details)
    ? raw.completion_tokens_details
    : {};
  // As `Usage.from_openai` (verifiers/v1/types.py@a60a606): what the provider did not
  // report stays null, and a provider-reported `cost` is kept.
  const cached = optionalNum(promptDetails.cached_tokens);
  return {
    prompt_tokens: Math.max(0, num(raw.prompt_tokens) - (cached ?? 0)),
    completion_tokens: num(raw.completion_tokens),
    cached_input_tokens: cached,
    reasoning_tokens: optionalNum(completionDetails.reasoning_tokens),
    cost: optionalNum(raw.cost),
  };
}

function contentText(content: unknown): string | null {
  if (content === null || content === undefined) return null;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (isRecord(p) && typeof p.text === "string" ? p.text : ""))
      .join("");
  }
  return String(content);
}

function userContent(content: unknown): string | ContentPart[] {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content as ContentPart[];
  return content === null || content === undefined ? "" : String(content);
}

function toolCallsFromChat(raw: unknown): ToolCall[] | null {
  if (!Array.isArray(raw) || raw.length === 0) return null;
  return raw.map((tc) => {
    const fn = isRecord(tc) && isRecord(tc.function) ? tc.function : {};
    const args = fn.arguments;
    return {
      id: isRecord(tc) ? str(tc.id) ?? "" : "",
      name: str(fn.name) ?? "",
      arguments: typeof args === "string" ? args : args === undefined ? "" : JSON.stringify(args),
    };
  });
}

/**
 * Converts a chat message (request or response) into the trace's {@link Message}.
 * `developer` maps to `system`; `reasoning` is accepted as `reasoning_content`.
 */
export function chatToMessage(raw: ChatMessage): Message {
  switch (raw.role) {
    case "system":
    case "developer":
      return { role: "system", content: userContent(raw.content) };
    case "assistant": {
      const msg: Message = { role: "assistant", content: contentText(raw.content) };
      const reasoning = str(raw.reasoning_content) ?? str(raw.reasoning);
      if (reasoning !== null) msg.reasoning_content = reasoning;
      const calls = toolCallsFromChat(raw.tool_calls);
      if (calls) msg.tool_calls = calls;
      // a copy: the message must hold nothing of `raw`, which a harness in this process may
      // be handed as its own (lib/interception/call.ts)
      if (raw.provider_state !== undefined) {
        msg.provider_state = structuredClone(raw.provider_state);
      }
      return msg;
    }
    case "tool":
      return {
        role: "tool",
        tool_call_id: str(raw.tool_call_id) ?? "",
        content: userContent(raw.content),
        ...(typeof raw.name === "string" ? { name: raw.name } : {}),
      };
    default:
      return { role: "user", content: userContent(raw.content) };
  }
}

/** The `tools` of a chat request as recorded on `trace.tools`. */
export function toolSpecsFromChat(tools: unknown[]): ToolSpec[] {
  const out: ToolSpec[] = [];
  for (const tool of tools) {
    if (!isRecord(tool)) continue;
    const fn = isRecord(tool.function) ? tool.function : tool;
    const name = str(fn.name);
    if (name === null) continue;
    out.push({
      name,
      description: str(fn.description),
      parameters: isRecord(fn.parameters) ? fn.parameters : null,
      strict: typeof fn.strict === "boolean" ? fn.strict : null,
    });
  }
  return out;
}

/** The outcome of one chat completion, whether from a JSON body or reassembled deltas. */
export type ChatOutcome = DialectOutcome;

/** Reads the first choice of a non-streaming chat completion; null when there is none. */
export function outcomeFromCompletion(json: unknown): ChatOutcome | null {
  if (!isRecord(json) || !Array.isArray(json.choices) || json.choices.length === 0) return null;
  const choice = json.choices[0];
  if (!isRecord(choice) || !isRecord(choice.message)) return null;
  return {
    message: chatToMessage({ ...choice.message, role: "assistant" } as ChatMessage),
    finishReason: str(choice.finish_reason),
    usage: parseChatUsage(json.usage),
  };
}
