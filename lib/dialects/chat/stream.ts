/**
 * Streamed chat completions: reassembling the first choice from its chunks, and the
 * dialect's reader that classifies each server-sent event for the relay. Each event costs
 * one JSON parse and work bounded by its own size (text deltas are kept as parts and
 * joined once, at the end).
 *
 * @module
 */
import type { Message, Usage } from "../../../kit/trace/types.ts";
import { isRecord } from "../../../kit/util/is_record.ts";
import type { AnswerDelta, DialectStreamReader, StreamVerdict } from "../../../kit/wire/dialect.ts";
import { isDone, type SseEvent } from "../../../kit/wire/sse.ts";
import { type ChatOutcome, num, parseChatUsage, str } from "./codec.ts";

interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

/**
 * Reassembles the first choice of a streamed chat completion from its chunks: content,
 * reasoning, tool calls (arguments concatenated per index), finish reason and usage.
 */
export class ChatStreamAccumulator {
  readonly #content: string[] = [];
  readonly #reasoning: string[] = [];
  #sawContent = false;
  #sawReasoning = false;
  #sawChoice = false;
  #toolCalls = new Map<number, PartialToolCall>();
  #finishReason: string | null = null;
  #usage: Usage | null = null;
  readonly #onDelta: ((delta: AnswerDelta) => void) | undefined;

  /** `onDelta` is told each piece of the answer as its chunk is added. */
  constructor(onDelta?: (delta: AnswerDelta) => void) {
    this.#onDelta = onDelta;
  }

  /** Adds one parsed `chat.completion.chunk`. */
  add(chunk: unknown): void {
    if (!isRecord(chunk)) return;
    if (isRecord(chunk.usage)) this.#usage = parseChatUsage(chunk.usage);
    if (!Array.isArray(chunk.choices)) return;
    for (const choice of chunk.choices) {
      if (!isRecord(choice) || num(choice.index) !== 0) continue;
      this.#sawChoice = true;
      const finish = str(choice.finish_reason);
      if (finish !== null) this.#finishReason = finish;
      const delta = isRecord(choice.delta) ? choice.delta : {};
      const content = str(delta.content);
      if (content !== null) {
        this.#content.push(content);
        this.#sawContent = true;
        if (content !== "") this.#onDelta?.({ kind: "text", text: content });
      }
      const reasoning = str(delta.reasoning_content) ?? str(delta.reasoning);
      if (reasoning !== null) {
        this.#reasoning.push(reasoning);
        this.#sawReasoning = true;
        if (reasoning !== "") this.#onDelta?.({ kind: "reasoning", text: reasoning });
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const tc of delta.tool_calls) this.#addToolCall(tc);
      }
    }
  }

  #addToolCall(tc: unknown): void {
    if (!isRecord(tc)) return;
    const index = typeof tc.index === "number" ? tc.index : this.#toolCalls.size;
    let acc = this.#toolCalls.get(index);
    if (!acc) {
      acc = { id: "", name: "", arguments: "" };
      this.#toolCalls.set(index, acc);
    }
    if (typeof tc.id === "string" && tc.id) acc.id = tc.id;
    const fn = isRecord(tc.function) ? tc.function : {};
    if (typeof fn.name === "string") acc.name += fn.name;
    if (typeof fn.arguments === "string") acc.arguments += fn.arguments;
    if (this.#onDelta) {
      const delta: Extract<AnswerDelta, { kind: "tool_call" }> = { kind: "tool_call", index };
      if (typeof tc.id === "string" && tc.id) delta.id = tc.id;
      if (typeof fn.name === "string" && fn.name) delta.name = fn.name;
      if (typeof fn.arguments === "string" && fn.arguments) delta.arguments = fn.arguments;
      this.#onDelta(delta);
    }
  }

  /** True once a chunk carried the first choice. */
  get sawChoice(): boolean {
    return this.#sawChoice;
  }

  /** The reassembled outcome. */
  result(): ChatOutcome {
    const message: Message = {
      role: "assistant",
      content: this.#sawContent ? this.#content.join("") : null,
    };
    if (this.#sawReasoning) message.reasoning_content = this.#reasoning.join("");
    if (this.#toolCalls.size > 0) {
      message.tool_calls = [...this.#toolCalls.entries()]
        .sort((a, b) => a[0] - b[0])
        .map(([, tc]) => ({ id: tc.id, name: tc.name, arguments: tc.arguments }));
    }
    return { message, finishReason: this.#finishReason, usage: this.#usage };
  }
}

/** True for a streamed chunk that carries only usage (`choices: []`). */
function isUsageOnlyChunk(chunk: unknown): boolean {
  return isRecord(chunk) && Array.isArray(chunk.choices) && chunk.choices.length === 0 &&
    isRecord(chunk.usage);
}

/** The chat dialect's {@link DialectStreamReader}: `data: [DONE]` ends the stream. */
export class ChatStreamReader implements DialectStreamReader {
  readonly #acc: ChatStreamAccumulator;
  readonly #relayUsage: boolean;

  constructor(relayUsage: boolean, onDelta?: (delta: AnswerDelta) => void) {
    this.#relayUsage = relayUsage;
    this.#acc = new ChatStreamAccumulator(onDelta);
  }

  read(event: SseEvent): StreamVerdict {
    if (event.data === null) return { kind: "relay" };
    if (isDone(event.data)) return { kind: "terminal" };
    let chunk: unknown;
    try {
      chunk = JSON.parse(event.data);
    } catch {
      chunk = undefined;
    }
    if (!isRecord(chunk)) return { kind: "malformed", data: event.data.slice(0, 200) };
    this.#acc.add(chunk);
    if (chunk.error !== undefined && chunk.error !== null) {
      const message = isRecord(chunk.error) && typeof chunk.error.message === "string"
        ? chunk.error.message
        : JSON.stringify(chunk.error);
      return { kind: "error", message };
    }
    if (!this.#relayUsage && isUsageOnlyChunk(chunk)) return { kind: "hide" };
    return { kind: "relay" };
  }

  get answered(): boolean {
    return this.#acc.sawChoice;
  }

  result(): ChatOutcome {
    return this.#acc.result();
  }
}
