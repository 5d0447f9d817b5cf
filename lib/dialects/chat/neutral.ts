/**
 * Chat completions as the provider of a translated request: the body built from a request
 * in the trace's terms ({@link NeutralRequest}: messages, function tools, settings), which
 * the chat dialect then prepares as a program's own (the run's model and sampling, stream
 * usage). What chat completions cannot carry — an image in a tool result — is said, not
 * dropped.
 *
 * @module
 */
import type { ContentPart } from "../../../kit/trace/types.ts";
import { type ChatMessage, type ChatRequestBody, toChatMessages } from "../../../kit/wire/chat.ts";
import type { NeutralRequest, NeutralSettings } from "../../../kit/wire/dialect.ts";

/** The settings keys chat completions takes under the same name. */
const SAME_NAME: readonly (keyof NeutralSettings)[] = [
  "max_tokens",
  "temperature",
  "top_p",
  "top_k",
  "stop",
  "seed",
  "reasoning_effort",
  "user",
];

function hasImage(content: string | ContentPart[]): boolean {
  return Array.isArray(content) && content.some((p) => p.type === "image_url");
}

/** The chat body of a translated request; a string names what chat cannot carry. */
export function chatBodyFromNeutral(request: NeutralRequest): ChatRequestBody | string {
  for (const m of request.messages) {
    if (m.role === "tool" && hasImage(m.content)) {
      return "an image in a tool result (a chat completions tool message takes text only)";
    }
  }
  const messages: ChatMessage[] = toChatMessages(request.messages).map((m) =>
    // an assistant turn that was only thinking still needs content
    m.role === "assistant" && m.content === null && !m.tool_calls ? { ...m, content: "" } : m
  );
  const body: ChatRequestBody = { messages };
  if (request.stream) body.stream = true;
  const s = request.settings;
  for (const key of SAME_NAME) if (s[key] !== undefined) body[key] = s[key];
  const tools = request.tools ?? [];
  if (tools.length > 0) {
    body.tools = tools.map((t) => ({
      type: "function",
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.parameters ?? { type: "object", properties: {} },
        ...(t.strict !== null ? { strict: t.strict } : {}),
      },
    }));
    const choice = s.tool_choice;
    if (choice !== undefined) {
      body.tool_choice = typeof choice === "string"
        ? choice
        : { type: "function", function: { name: choice.name } };
    }
    if (s.parallel_tool_calls !== undefined) body.parallel_tool_calls = s.parallel_tool_calls;
  } else if (s.tool_choice === "required" || typeof s.tool_choice === "object") {
    return "a tool_choice that requires a tool, with no function tool offered";
  }
  const format = s.response_format;
  if (format?.type === "json_schema") {
    body.response_format = {
      type: "json_schema",
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.strict !== null ? { strict: format.strict } : {}),
      },
    };
  } else if (format) body.response_format = format;
  return body;
}
