/**
 * An OpenAI Responses request in the trace's terms, for a provider that does not serve
 * Responses (translation, lib/interception/translate.ts): the conversation as the dialect
 * reads it, the function tools, and the settings (`max_output_tokens` as `max_tokens`,
 * `reasoning.effort`, `text.format` as a response format, `tool_choice`,
 * `parallel_tool_calls`). What only a Responses provider holds or runs — a stored response
 * or conversation, a prompt template, a background run, a built-in or custom tool and its
 * items, files and audio — is named, so the call is refused rather than sent without it.
 * Encrypted reasoning goes nowhere (only its provider can read it); its summary is kept.
 *
 * @module
 */
import { isRecord } from "../../../kit/util/is_record.ts";
import type { DialectRequest, NeutralRequest, NeutralSettings } from "../../../kit/wire/dialect.ts";
import { toolSpecsOf } from "./request.ts";

/** Input item types a request of another dialect can carry. */
const PORTABLE_ITEMS = new Set([
  "message",
  "function_call",
  "function_call_output",
  "reasoning",
]);

/** Content part types a request of another dialect can carry. */
const PORTABLE_PARTS = new Set(["input_text", "output_text", "refusal", "input_image"]);

/** Request fields that name state or work held by the provider. */
const PROVIDER_HELD: Readonly<Record<string, string>> = {
  previous_response_id: "a stored response (previous_response_id); send the whole input instead",
  conversation: "a stored conversation (conversation)",
  prompt: "a stored prompt template (prompt)",
};

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

function partsProblem(parts: unknown, where: string): string | null {
  if (!Array.isArray(parts)) return null;
  for (const part of parts) {
    if (!isRecord(part)) continue;
    const type = String(part.type);
    if (!PORTABLE_PARTS.has(type)) return `an '${type}' content part (${where})`;
    if (type === "input_image" && typeof part.image_url !== "string") {
      return `an input_image without an image_url (a file_id, ${where})`;
    }
  }
  return null;
}

function requestProblem(body: Record<string, unknown>): string | null {
  for (const key of Object.keys(PROVIDER_HELD)) {
    if (body[key] !== undefined && body[key] !== null) return PROVIDER_HELD[key]!;
  }
  if (body.background === true) return "a background response (background)";
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (isRecord(tool) && tool.type !== "function") {
      return `the built-in tool '${String(tool.type)}', which only a Responses provider runs`;
    }
  }
  const input = Array.isArray(body.input) ? body.input : [];
  for (const [i, item] of input.entries()) {
    if (!isRecord(item)) continue;
    const type = typeof item.type === "string" ? item.type : "message";
    if (!PORTABLE_ITEMS.has(type)) return `an input item of type '${type}' (input[${i}])`;
    const problem = type === "message"
      ? partsProblem(item.content, `input[${i}]`)
      : type === "function_call_output"
      ? partsProblem(item.output, `input[${i}]`)
      : null;
    if (problem) return problem;
  }
  return null;
}

function settingsOf(body: Record<string, unknown>): NeutralSettings | string {
  const s: NeutralSettings = {};
  const max = num(body.max_output_tokens);
  if (max !== undefined) s.max_tokens = max;
  const temperature = num(body.temperature);
  if (temperature !== undefined) s.temperature = temperature;
  const topP = num(body.top_p);
  if (topP !== undefined) s.top_p = topP;
  if (isRecord(body.reasoning) && typeof body.reasoning.effort === "string") {
    s.reasoning_effort = body.reasoning.effort;
  }
  if (typeof body.parallel_tool_calls === "boolean") {
    s.parallel_tool_calls = body.parallel_tool_calls;
  }
  const choice = body.tool_choice;
  if (choice === "auto" || choice === "none" || choice === "required") s.tool_choice = choice;
  else if (isRecord(choice)) {
    if (choice.type !== "function" || typeof choice.name !== "string") {
      return `the tool_choice type '${String(choice.type)}'`;
    }
    s.tool_choice = { name: choice.name };
  }
  const format = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : null;
  if (format?.type === "json_schema") {
    s.response_format = {
      type: "json_schema",
      name: typeof format.name === "string" ? format.name : "output",
      schema: isRecord(format.schema) ? format.schema : {},
      strict: typeof format.strict === "boolean" ? format.strict : null,
    };
  } else if (format?.type === "json_object") s.response_format = { type: "json_object" };
  const user = typeof body.user === "string"
    ? body.user
    : typeof body.safety_identifier === "string"
    ? body.safety_identifier
    : null;
  if (user !== null) s.user = user;
  return s;
}

/** The request in the trace's terms, or what in it cannot be translated. */
export function responsesNeutral(request: DialectRequest): NeutralRequest | string {
  const body = request.body;
  const problem = requestProblem(body);
  if (problem !== null) return problem;
  const settings = settingsOf(body);
  if (typeof settings === "string") return settings;
  return {
    messages: request.messages,
    tools: toolSpecsOf(body.tools),
    stream: request.stream,
    settings,
  };
}
