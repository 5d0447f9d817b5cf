/**
 * Rendering an answer as OpenAI chat completions: the JSON body of a completion and the
 * `chat.completion.chunk` events of a stream (content and tool-call arguments in small
 * pieces, a finish chunk, an optional usage chunk, then `data: [DONE]`). The oracle
 * answers with these.
 *
 * @module
 */
import type { Message, Usage } from "../../../kit/trace/types.ts";
import type { ChatToolCall } from "../../../kit/wire/chat.ts";
import type { DialectOutcome, RenderMeta } from "../../../kit/wire/dialect.ts";
import { sseData } from "../../../kit/wire/sse.ts";

/** Characters per streamed content or arguments piece. */
const CHUNK_CHARS = 16;

/** Usage in the chat API's shape (prompt tokens include cached ones). */
function chatUsage(usage: Usage) {
  const prompt = usage.prompt_tokens + (usage.cached_input_tokens ?? 0);
  return {
    prompt_tokens: prompt,
    completion_tokens: usage.completion_tokens,
    total_tokens: prompt + usage.completion_tokens,
    ...(usage.cached_input_tokens !== null
      ? { prompt_tokens_details: { cached_tokens: usage.cached_input_tokens } }
      : {}),
    ...(usage.reasoning_tokens !== null
      ? { completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens } }
      : {}),
  };
}

function toolCallsOf(message: Message): ChatToolCall[] {
  if (message.role !== "assistant" || !message.tool_calls) return [];
  return message.tool_calls.map((c) => ({
    id: c.id,
    type: "function",
    function: { name: c.name, arguments: c.arguments },
  }));
}

function textOf(message: Message): string | null {
  return typeof message.content === "string" ? message.content : null;
}

/** The JSON body of a chat completion carrying `outcome`. */
export function renderChatCompletion(outcome: DialectOutcome, meta: RenderMeta): unknown {
  const calls = toolCallsOf(outcome.message);
  const reasoning = outcome.message.role === "assistant"
    ? outcome.message.reasoning_content
    : undefined;
  return {
    id: meta.id,
    object: "chat.completion",
    created: meta.created,
    model: meta.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: textOf(outcome.message),
        refusal: null,
        ...(typeof reasoning === "string" ? { reasoning_content: reasoning } : {}),
        ...(calls.length > 0 ? { tool_calls: calls } : {}),
      },
      logprobs: null,
      finish_reason: outcome.finishReason,
    }],
    ...(outcome.usage ? { usage: chatUsage(outcome.usage) } : {}),
  };
}

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += CHUNK_CHARS) out.push(text.slice(i, i + CHUNK_CHARS));
  return out;
}

/** The SSE events of a streamed chat completion carrying `outcome`, `data: [DONE]` last. */
export function renderChatStream(outcome: DialectOutcome, meta: RenderMeta): string[] {
  const usage = meta.includeUsage === true && outcome.usage ? chatUsage(outcome.usage) : null;
  const base = { id: meta.id, object: "chat.completion.chunk", created: meta.created };
  const events: string[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null) => {
    const data: Record<string, unknown> = {
      ...base,
      model: meta.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    };
    if (usage) data.usage = null;
    events.push(sseData(data));
  };
  const message = outcome.message;
  const reasoning = message.role === "assistant" ? message.reasoning_content : undefined;
  if (typeof reasoning === "string") {
    for (const piece of pieces(reasoning)) chunk({ reasoning_content: piece }, null);
  }
  const calls = toolCallsOf(message);
  const text = textOf(message);
  if (calls.length === 0 || text !== null) {
    chunk({ role: "assistant", content: "" }, null);
    for (const piece of pieces(text ?? "")) chunk({ content: piece }, null);
  }
  calls.forEach((call, index) => {
    const { id, type, function: { name, arguments: args } } = call;
    const head = { index, id, type, function: { name, arguments: "" } };
    const opens = index === 0 && text === null;
    chunk(
      opens ? { role: "assistant", content: null, tool_calls: [head] } : { tool_calls: [head] },
      null,
    );
    for (const piece of pieces(args)) {
      chunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null);
    }
  });
  chunk({}, outcome.finishReason);
  if (usage) events.push(sseData({ ...base, model: meta.model, choices: [], usage }));
  events.push(sseData("[DONE]"));
  return events;
}
