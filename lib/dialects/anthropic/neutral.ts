/**
 * An Anthropic Messages request in the trace's terms, for a provider that does not serve
 * Messages (translation, lib/interception/translate.ts): the conversation as the dialect
 * reads it, the client tools, and the settings (`stop_sequences` as `stop`, `tool_choice`
 * `any` as `required`, `disable_parallel_tool_use`, `metadata.user_id` as the user,
 * `output_config.effort` as the reasoning effort). What only Anthropic's side can run —
 * server tools and Anthropic-defined tools, MCP servers, a container, documents, files, a
 * prefilled assistant turn —
 * is named, so the call is refused rather than sent without it. `thinking` budgets and
 * `cache_control` marks are hints a chat server has no words for and are not sent.
 *
 * @module
 */
import { isRecord } from "../../../kit/util/is_record.ts";
import type { DialectRequest, NeutralRequest, NeutralSettings } from "../../../kit/wire/dialect.ts";
import { str, toolSpecs } from "./codec.ts";

/** The content blocks a request of another dialect can carry. */
const PORTABLE_BLOCKS = new Set([
  "text",
  "image",
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
]);

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** What in one content block cannot be translated, or null. */
function blockProblem(block: unknown, where: string): string | null {
  if (!isRecord(block)) return null;
  const type = str(block.type) ?? "?";
  if (!PORTABLE_BLOCKS.has(type)) return `a '${type}' content block (${where})`;
  if (type === "image") {
    const source = isRecord(block.source) ? block.source : {};
    if (source.type !== "base64" && source.type !== "url") {
      return `an image from a '${str(source.type) ?? "?"}' source (${where})`;
    }
  }
  if (type === "tool_result" && Array.isArray(block.content)) {
    for (const inner of block.content) {
      const problem = blockProblem(inner, `${where}, in a tool_result`);
      if (problem) return problem;
    }
  }
  return null;
}

/** What in the request's body cannot be translated, or null. */
function requestProblem(body: Record<string, unknown>): string | null {
  if (body.mcp_servers !== undefined) return "MCP servers (mcp_servers), which Anthropic runs";
  if (body.container !== undefined) return "a code execution container (container)";
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    if (!isRecord(tool) || isRecord(tool.input_schema)) continue;
    const name = str(tool.name) ?? "?";
    return `the server or Anthropic-defined tool '${name}' (type ${str(tool.type) ?? "?"}), ` +
      "which only Anthropic runs or knows the schema of";
  }
  if (Array.isArray(body.system)) {
    for (const block of body.system) {
      if (isRecord(block) && block.type !== "text") {
        return `a '${str(block.type) ?? "?"}' block in system`;
      }
    }
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  if (isRecord(last) && last.role === "assistant") {
    // chat completions answers a conversation; it does not continue the model's own turn
    return "a prefilled assistant turn (the last message is the assistant's)";
  }
  for (const [i, message] of messages.entries()) {
    if (!isRecord(message) || !Array.isArray(message.content)) continue;
    for (const block of message.content) {
      const problem = blockProblem(block, `messages[${i}]`);
      if (problem) return problem;
    }
  }
  return null;
}

function settingsOf(body: Record<string, unknown>): NeutralSettings | string {
  const s: NeutralSettings = {};
  const set = <K extends keyof NeutralSettings>(key: K, value: NeutralSettings[K] | undefined) => {
    if (value !== undefined) s[key] = value;
  };
  set("max_tokens", num(body.max_tokens));
  set("temperature", num(body.temperature));
  set("top_p", num(body.top_p));
  set("top_k", num(body.top_k));
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length > 0) {
    s.stop = body.stop_sequences.filter((x): x is string => typeof x === "string");
  }
  const choice = isRecord(body.tool_choice) ? body.tool_choice : null;
  if (choice !== null) {
    switch (choice.type) {
      case "auto":
      case "none":
        s.tool_choice = choice.type;
        break;
      case "any":
        s.tool_choice = "required";
        break;
      case "tool":
        s.tool_choice = { name: str(choice.name) ?? "" };
        break;
      default:
        return `the tool_choice type '${String(choice.type)}'`;
    }
    if (choice.disable_parallel_tool_use === true) s.parallel_tool_calls = false;
  }
  const user = isRecord(body.metadata) ? str(body.metadata.user_id) : null;
  if (user !== null) s.user = user;
  const config = isRecord(body.output_config) ? body.output_config : {};
  if (typeof config.effort === "string") s.reasoning_effort = config.effort;
  const format = isRecord(config.format)
    ? config.format
    : isRecord(body.output_format)
    ? body.output_format
    : null;
  if (format !== null) {
    if (format.type !== "json_schema" || !isRecord(format.schema)) {
      return `the output format '${String(format.type)}'`;
    }
    s.response_format = {
      type: "json_schema",
      name: "output",
      schema: format.schema,
      strict: true,
    };
  }
  return s;
}

/** The request in the trace's terms, or what in it cannot be translated. */
export function anthropicNeutral(request: DialectRequest): NeutralRequest | string {
  const body = request.body;
  const problem = requestProblem(body);
  if (problem !== null) return problem;
  const settings = settingsOf(body);
  if (typeof settings === "string") return settings;
  const tools = Array.isArray(body.tools) ? toolSpecs(body.tools) : [];
  return {
    messages: request.messages,
    tools: tools.length > 0 ? tools : null,
    stream: request.stream,
    settings,
  };
}
