/**
 * Reading an OpenAI Responses request in the trace's terms: `instructions` and the `input`
 * items (a string, or messages, function calls, their outputs and reasoning) into trace
 * messages, the function tools offered, the run's model and sampling imposed in the
 * Responses shape (`max_output_tokens`, `reasoning.effort`), and the settings recorded.
 * As verifiers/v1/dialects/responses.py@a60a606: each run of assistant-side items folds
 * into one assistant message that keeps the items as its `provider_state`.
 *
 * @module
 */
import type { ContentPart, Message, ToolCall, ToolSpec } from "../../../kit/trace/types.ts";
import { isRecord } from "../../../kit/util/is_record.ts";

/** The path of the call under a `/v1` base URL (also `ModelCall.endpoint`). */
export const RESPONSES_PATH = "/responses";

/** Program settings the run owns: dropped from the body, the run's own put in their place. */
const RUN_OWNED_KEYS: readonly string[] = [
  "temperature",
  "top_p",
  "max_output_tokens",
  "max_tokens",
];

/** Settings recorded in `ModelCall.sampling` when present in the body sent upstream. */
const SAMPLING_FIELDS: readonly string[] = [
  "temperature",
  "top_p",
  "max_output_tokens",
  "max_tool_calls",
  "reasoning",
  "text",
  "tool_choice",
  "parallel_tool_calls",
  "top_logprobs",
  "truncation",
];

type Item = Record<string, unknown>;

function str(value: unknown): string | null {
  return typeof value === "string" ? value : null;
}

/** An `input_text`/`output_text`/`input_image` list as trace content; a string as it is. */
export function contentOf(content: unknown): string | ContentPart[] {
  if (typeof content === "string") return content;
  const parts: ContentPart[] = [];
  if (!Array.isArray(content)) return parts;
  for (const part of content) {
    if (!isRecord(part)) continue;
    if (part.type === "input_text" || part.type === "output_text") {
      parts.push({ type: "text", text: str(part.text) ?? "" });
    } else if (part.type === "input_image") {
      parts.push({ type: "image_url", image_url: { url: str(part.image_url) ?? "" } });
    }
  }
  return parts;
}

/** The text of reasoning items: their summaries, then their content. */
export function reasoningText(item: Item, into: string[]): void {
  for (const key of ["summary", "content"]) {
    const parts = item[key];
    if (!Array.isArray(parts)) continue;
    for (const p of parts) {
      const text = isRecord(p) ? str(p.text) : null;
      if (text) into.push(text);
    }
  }
}

/** A `function_call` (or `custom_tool_call`) item as a trace tool call. */
export function toolCallOf(item: Item): ToolCall {
  return {
    id: str(item.call_id) ?? "",
    name: str(item.name) ?? "",
    arguments: str(item.arguments) ?? str(item.input) ?? "",
  };
}

/** True for an item the model produced (a reasoning, message or tool call item). */
function assistantSide(item: Item): boolean {
  if (item.role !== undefined && item.role !== null) return item.role === "assistant";
  const type = str(item.type) ?? "";
  return !type.endsWith("_output") && !type.endsWith("_response");
}

/** One run of assistant-side items as one assistant message. */
function foldAssistant(items: Item[]): Message {
  let content = "";
  const reasoning: string[] = [];
  const calls: ToolCall[] = [];
  for (const item of items) {
    if (item.type === "reasoning") reasoningText(item, reasoning);
    else if (item.type === "function_call" || item.type === "custom_tool_call") {
      calls.push(toolCallOf(item));
    } else {
      const raw = item.content;
      if (typeof raw === "string") content += raw;
      else if (Array.isArray(raw)) {
        for (const p of raw) {
          if (isRecord(p) && (p.type === "input_text" || p.type === "output_text")) {
            content += str(p.text) ?? "";
          }
        }
      }
    }
  }
  const message: Message = { role: "assistant", content: content || null };
  if (reasoning.length > 0) message.reasoning_content = reasoning.join("\n");
  if (calls.length > 0) message.tool_calls = calls;
  // the items as they came: the graph copies those of a message it keeps
  // (lib/interception/graph.ts), the conversation sent again is only matched
  message.provider_state = items;
  return message;
}

/** The conversation of a request: `instructions` first, then the `input` items. */
export function messagesOf(body: Record<string, unknown>): Message[] {
  const out: Message[] = [];
  const instructions = str(body.instructions);
  if (instructions) out.push({ role: "system", content: instructions });
  const raw = body.input;
  const items: unknown[] = typeof raw === "string"
    ? [{ role: "user", content: raw }]
    : Array.isArray(raw)
    ? raw
    : [];
  let run: Item[] = [];
  for (const entry of items) {
    const item: Item = isRecord(entry) ? entry : {};
    const assistant = assistantSide(item);
    if (run.length > 0 && !assistant) {
      out.push(foldAssistant(run));
      run = [];
    }
    if (assistant) run.push(item);
    else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      const output = item.output;
      out.push({
        role: "tool",
        tool_call_id: str(item.call_id) ?? "",
        content: typeof output === "string" || Array.isArray(output)
          ? contentOf(output)
          : JSON.stringify(output ?? null),
      });
    } else if (item.role === "system" || item.role === "developer") {
      out.push({ role: "system", content: contentOf(item.content) });
    } else out.push({ role: "user", content: contentOf(item.content) });
  }
  if (run.length > 0) out.push(foldAssistant(run));
  return out;
}

/** The function tools of a request as recorded on `trace.tools`; null when none. */
export function toolSpecsOf(tools: unknown): ToolSpec[] | null {
  if (!Array.isArray(tools)) return null;
  const out: ToolSpec[] = [];
  for (const tool of tools) {
    if (!isRecord(tool) || tool.type !== "function" || typeof tool.name !== "string") continue;
    out.push({
      name: tool.name,
      description: str(tool.description) ?? "",
      parameters: isRecord(tool.parameters) ? tool.parameters : {},
      strict: typeof tool.strict === "boolean" ? tool.strict : null,
    });
  }
  return out.length > 0 ? out : null;
}

/** OpenAI's reasoning models, which keep their reasoning only when asked to. */
function isReasoningModel(model: string): boolean {
  const name = model.slice(model.lastIndexOf("/") + 1);
  return /^(gpt-5|o1|o3|o4)/.test(name) && !name.includes("-chat") &&
    (!model.includes("/") || model.startsWith("openai/"));
}

/**
 * The body sent upstream: the program's, with the model replaced and the run's sampling
 * authoritative (the program's own temperature, top_p and token cap are dropped);
 * `max_tokens` goes out as `max_output_tokens`, `reasoning_effort` as `reasoning.effort`.
 * Reasoning models also get their encrypted reasoning and a summary asked for, so the
 * next turn can replay it and the trace can read it. Other run keys are not Responses
 * parameters and are not sent. Returns a new object.
 */
export function applyResponsesOverrides(
  body: Record<string, unknown>,
  model: string,
  sampling: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(body)) {
    if (!RUN_OWNED_KEYS.includes(key)) out[key] = body[key];
  }
  out.model = model;
  const given = (key: string) => sampling[key] !== null && sampling[key] !== undefined;
  const reasoningModel = isReasoningModel(model);
  if (reasoningModel) {
    const include = Array.isArray(body.include) ? [...body.include] : [];
    if (!include.includes("reasoning.encrypted_content")) {
      include.push("reasoning.encrypted_content");
    }
    out.include = include;
  }
  if (given("temperature")) out.temperature = sampling.temperature;
  if (given("top_p")) out.top_p = sampling.top_p;
  if (given("max_tokens")) out.max_output_tokens = sampling.max_tokens;
  let reasoning: Record<string, unknown> = isRecord(body.reasoning) ? { ...body.reasoning } : {};
  if (reasoningModel) reasoning = { summary: "auto", ...reasoning };
  if (given("reasoning_effort")) reasoning.effort = sampling.reasoning_effort;
  if (Object.keys(reasoning).length > 0) out.reasoning = reasoning;
  return out;
}

/**
 * The settings recorded for a call, from the body sent upstream: `reasoning.effort` lifted
 * to `reasoning_effort` (other reasoning keys kept), `max_output_tokens` as `max_tokens`.
 */
export function recordedSampling(sent: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SAMPLING_FIELDS) {
    if (sent[key] !== undefined && sent[key] !== null) out[key] = sent[key];
  }
  if (isRecord(out.reasoning)) {
    const { effort, ...rest } = out.reasoning;
    if (effort) out.reasoning_effort = effort;
    if (Object.keys(rest).length > 0) out.reasoning = rest;
    else delete out.reasoning;
  }
  if ("max_output_tokens" in out) {
    out.max_tokens = out.max_output_tokens;
    delete out.max_output_tokens;
  }
  return out;
}
