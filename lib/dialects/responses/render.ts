/**
 * Rendering an answer as OpenAI Responses: the JSON `response` object, and the stream of
 * its events in the order the API sends them (`response.created`, `response.in_progress`,
 * then per output item `output_item.added`, its parts and deltas, `output_item.done`, and
 * `response.completed` — or `response.incomplete` for an answer cut at its token cap). The
 * oracle answers with these.
 *
 * @module
 */
import type { Message, Usage } from "../../../kit/trace/types.ts";
import { isRecord } from "../../../kit/util/is_record.ts";
import type { DialectOutcome, RenderMeta } from "../../../kit/wire/dialect.ts";

/** Characters per streamed text or arguments piece. */
const CHUNK_CHARS = 16;

type Item = Record<string, unknown>;

/** Usage in the Responses shape (input tokens include cached ones). */
function responsesUsage(usage: Usage) {
  const input = usage.prompt_tokens + (usage.cached_input_tokens ?? 0);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cached_input_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    total_tokens: input + usage.completion_tokens,
  };
}

/**
 * The output items of an answer: the provider's own when it carries them (an answer read
 * from a Responses provider keeps them as its `provider_state`), else reasoning, then the
 * message, then its function calls.
 */
function outputItems(message: Message, id: string): Item[] {
  if (message.role !== "assistant") return [];
  const state = message.provider_state;
  if (Array.isArray(state) && state.length > 0 && state.every(isRecord)) return state;
  const items: Item[] = [];
  if (typeof message.reasoning_content === "string") {
    items.push({
      id: `rs_${id}`,
      type: "reasoning",
      summary: [{ type: "summary_text", text: message.reasoning_content }],
    });
  }
  const calls = message.tool_calls ?? [];
  if (typeof message.content === "string" || calls.length === 0) {
    items.push({
      id: `msg_${id}`,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: message.content ?? "", annotations: [] }],
    });
  }
  calls.forEach((call, i) => {
    items.push({
      id: `fc_${id}_${i}`,
      type: "function_call",
      status: "completed",
      call_id: call.id,
      name: call.name,
      arguments: call.arguments,
    });
  });
  return items;
}

function responseObject(outcome: DialectOutcome, meta: RenderMeta, output: Item[]): Item {
  const cut = outcome.finishReason === "length";
  return {
    id: meta.id,
    object: "response",
    created_at: meta.created,
    status: cut ? "incomplete" : "completed",
    error: null,
    incomplete_details: cut ? { reason: "max_output_tokens" } : null,
    instructions: null,
    model: meta.model,
    output,
    parallel_tool_calls: true,
    tool_choice: "auto",
    tools: [],
    usage: outcome.usage ? responsesUsage(outcome.usage) : null,
  };
}

/** The JSON body of a response carrying `outcome`. */
export function renderResponsesBody(outcome: DialectOutcome, meta: RenderMeta): unknown {
  return responseObject(outcome, meta, outputItems(outcome.message, meta.id));
}

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += CHUNK_CHARS) out.push(text.slice(i, i + CHUNK_CHARS));
  return out;
}

/** Streams the text of `part` (its `text`, or a refusal's `refusal`) as delta events. */
function partEvents(
  part: Item,
  where: Item,
  kind: "output_text" | "refusal" | "reasoning_text",
  emit: (type: string, data: Item) => void,
): void {
  const field = kind === "refusal" ? "refusal" : "text";
  const text = typeof part[field] === "string" ? part[field] as string : "";
  const extra = kind === "output_text" ? { logprobs: [] } : {};
  emit("response.content_part.added", { ...where, part: { ...part, [field]: "" } });
  for (const delta of pieces(text)) emit(`response.${kind}.delta`, { ...where, delta, ...extra });
  emit(`response.${kind}.done`, { ...where, [field]: text, ...extra });
  emit("response.content_part.done", { ...where, part });
}

const PART_KINDS: Record<string, "output_text" | "refusal" | "reasoning_text"> = {
  output_text: "output_text",
  refusal: "refusal",
  reasoning_text: "reasoning_text",
};

/** The events of one output item, from `output_item.added` to `output_item.done`. */
function itemEvents(item: Item, index: number, emit: (type: string, data: Item) => void): void {
  const at = { item_id: item.id, output_index: index };
  const list = (key: string) => Array.isArray(item[key]) ? item[key] as Item[] : [];
  if (item.type === "message") {
    emit("response.output_item.added", {
      output_index: index,
      item: { ...item, status: "in_progress", content: [] },
    });
    list("content").forEach((part, content_index) => {
      const kind = PART_KINDS[String(part.type)];
      const where = { ...at, content_index };
      if (kind) partEvents(part, where, kind, emit);
      else {
        emit("response.content_part.added", { ...where, part });
        emit("response.content_part.done", { ...where, part });
      }
    });
  } else if (item.type === "function_call") {
    emit("response.output_item.added", {
      output_index: index,
      item: { ...item, status: "in_progress", arguments: "" },
    });
    const args = typeof item.arguments === "string" ? item.arguments : "";
    for (const delta of pieces(args)) {
      emit("response.function_call_arguments.delta", { ...at, delta });
    }
    emit("response.function_call_arguments.done", { ...at, name: item.name, arguments: args });
  } else if (item.type === "reasoning") {
    const { content: _content, ...head } = item;
    emit("response.output_item.added", { output_index: index, item: { ...head, summary: [] } });
    list("summary").forEach((part, summary_index) => {
      const where = { ...at, summary_index };
      const text = typeof part.text === "string" ? part.text : "";
      emit("response.reasoning_summary_part.added", { ...where, part: { ...part, text: "" } });
      for (const delta of pieces(text)) {
        emit("response.reasoning_summary_text.delta", { ...where, delta });
      }
      emit("response.reasoning_summary_text.done", { ...where, text });
      emit("response.reasoning_summary_part.done", { ...where, part });
    });
    list("content").forEach((part, content_index) => {
      partEvents(part, { ...at, content_index }, "reasoning_text", emit);
    });
  } else emit("response.output_item.added", { output_index: index, item });
  emit("response.output_item.done", { output_index: index, item });
}

/** The SSE events of a streamed response carrying `outcome`, its final event last. */
export function renderResponsesStream(outcome: DialectOutcome, meta: RenderMeta): string[] {
  const events: string[] = [];
  const emit = (type: string, data: Item) => {
    const payload = JSON.stringify({ type, sequence_number: events.length, ...data });
    events.push(`event: ${type}\ndata: ${payload}\n\n`);
  };
  const output = outputItems(outcome.message, meta.id);
  const final = responseObject(outcome, meta, output);
  const head = {
    ...final,
    status: "in_progress",
    incomplete_details: null,
    output: [],
    usage: null,
  };
  emit("response.created", { response: head });
  emit("response.in_progress", { response: head });
  output.forEach((item, index) => itemEvents(item, index, emit));
  emit(final.status === "incomplete" ? "response.incomplete" : "response.completed", {
    response: final,
  });
  return events;
}
