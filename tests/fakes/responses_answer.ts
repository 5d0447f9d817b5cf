/**
 * The fake Responses server's answers: the response object and the event stream of one
 * scripted answer (text, reasoning, function calls, usage, an incomplete or failed end),
 * written here as the API documents them, with an SSE writer of the fake's own.
 *
 * @module
 */

/** A scripted answer. */
export interface FakeAnswer {
  text?: string;
  /** A reasoning summary, sent as a reasoning item before the message. */
  reasoning?: string;
  /** Function calls, after the message. */
  calls?: { id?: string; name: string; arguments: string | Record<string, unknown> }[];
  usage?: { input?: number; cached?: number; output?: number; reasoning?: number };
  /** End `incomplete` (the token cap), with what was produced so far. */
  incomplete?: boolean;
  /** End `failed` with this error. */
  failed?: { code: string; message: string };
  /** Streaming only: an `error` event after `response.in_progress`, and nothing after it. */
  streamError?: { code: string; message: string };
}

type Json = Record<string, unknown>;

function items(answer: FakeAnswer, id: string): Json[] {
  const out: Json[] = [];
  if (answer.reasoning !== undefined) {
    out.push({
      id: `rs_${id}`,
      type: "reasoning",
      summary: [{ type: "summary_text", text: answer.reasoning }],
    });
  }
  if (answer.text !== undefined) {
    out.push({
      id: `msg_${id}`,
      type: "message",
      status: answer.incomplete ? "incomplete" : "completed",
      role: "assistant",
      content: [{ type: "output_text", text: answer.text, annotations: [], logprobs: [] }],
    });
  }
  for (const [i, call] of (answer.calls ?? []).entries()) {
    out.push({
      id: `fc_${id}_${i}`,
      type: "function_call",
      status: "completed",
      call_id: call.id ?? `call_${id}_${i}`,
      name: call.name,
      arguments: typeof call.arguments === "string"
        ? call.arguments
        : JSON.stringify(call.arguments),
    });
  }
  return out;
}

function usageOf(answer: FakeAnswer, request: Json) {
  const u = answer.usage ?? {};
  const input = u.input ?? Math.max(1, Math.ceil(JSON.stringify(request.input ?? "").length / 4));
  const output = u.output ?? Math.max(1, Math.ceil((answer.text ?? "").length / 4));
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: u.cached ?? 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: u.reasoning ?? 0 },
    total_tokens: input + output,
  };
}

function status(answer: FakeAnswer): string {
  return answer.failed ? "failed" : answer.incomplete ? "incomplete" : "completed";
}

function responseOf(answer: FakeAnswer, id: string, model: string, request: Json, done: boolean) {
  const final = done ? status(answer) : "in_progress";
  return {
    id,
    object: "response",
    created_at: 1_760_000_000,
    status: final,
    background: false,
    error: done && answer.failed ? answer.failed : null,
    incomplete_details: done && answer.incomplete ? { reason: "max_output_tokens" } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model,
    output: done && !answer.failed ? items(answer, id) : [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: request.temperature ?? 1,
    text: { format: { type: "text" } },
    tool_choice: request.tool_choice ?? "auto",
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: "disabled",
    usage: done && !answer.failed ? usageOf(answer, request) : null,
    metadata: {},
  };
}

/** The JSON body of a (non-streamed) answer. */
export function answerObject(answer: FakeAnswer, id: string, model: string, request: Json) {
  return responseOf(answer, id, model, request, true);
}

function split(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** The SSE events of a streamed answer, each one whole `event:`/`data:` block. */
export function answerEvents(answer: FakeAnswer, id: string, model: string, request: Json) {
  const out: string[] = [];
  const emit = (type: string, fields: Json) => {
    const data = JSON.stringify({ type, sequence_number: out.length, ...fields });
    out.push(`event: ${type}\ndata: ${data}\n\n`);
  };
  const head = responseOf(answer, id, model, request, false);
  emit("response.created", { response: head });
  emit("response.in_progress", { response: head });
  if (answer.streamError) {
    emit("error", { ...answer.streamError, param: null });
    return out;
  }
  if (answer.failed) {
    emit("response.failed", { response: responseOf(answer, id, model, request, true) });
    return out;
  }
  for (const [index, item] of items(answer, id).entries()) {
    const at = { item_id: item.id, output_index: index };
    if (item.type === "message") {
      emit("response.output_item.added", {
        output_index: index,
        item: { ...item, status: "in_progress", content: [] },
      });
      const part = (item.content as Json[])[0]!;
      const where = { ...at, content_index: 0 };
      emit("response.content_part.added", { ...where, part: { ...part, text: "" } });
      for (const delta of split(part.text as string, 5)) {
        emit("response.output_text.delta", { ...where, delta, logprobs: [] });
      }
      emit("response.output_text.done", { ...where, text: part.text, logprobs: [] });
      emit("response.content_part.done", { ...where, part });
    } else if (item.type === "function_call") {
      emit("response.output_item.added", {
        output_index: index,
        item: { ...item, status: "in_progress", arguments: "" },
      });
      for (const delta of split(item.arguments as string, 7)) {
        emit("response.function_call_arguments.delta", { ...at, delta });
      }
      emit("response.function_call_arguments.done", { ...at, arguments: item.arguments });
    } else {
      emit("response.output_item.added", { output_index: index, item: { ...item, summary: [] } });
      const part = (item.summary as Json[])[0]!;
      const where = { ...at, summary_index: 0 };
      emit("response.reasoning_summary_part.added", { ...where, part: { ...part, text: "" } });
      emit("response.reasoning_summary_text.delta", { ...where, delta: part.text });
      emit("response.reasoning_summary_text.done", { ...where, text: part.text });
      emit("response.reasoning_summary_part.done", { ...where, part });
    }
    emit("response.output_item.done", { output_index: index, item });
  }
  const end = answer.incomplete ? "response.incomplete" : "response.completed";
  emit(end, { response: responseOf(answer, id, model, request, true) });
  return out;
}
