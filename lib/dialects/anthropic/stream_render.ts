/**
 * A translated answer streamed as Anthropic Messages, piece by piece as the provider's
 * events arrive: `message_start` and `ping` first, then one content block per kind of
 * piece (`thinking`, `text`, each `tool_use`) opened when its first piece comes and
 * stopped when another block begins, and at the end `message_delta` with the stop reason
 * and the whole usage, then `message_stop`. A provider error mid-stream is an `error` event.
 *
 * @module
 */
import type {
  AnswerDelta,
  DialectOutcome,
  DialectStreamRenderer,
  RenderMeta,
} from "../../../kit/wire/dialect.ts";
import { nativeStopReason } from "./codec.ts";
import { anthropicUsage } from "./render.ts";

function sse(type: string, payload: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`;
}

/** The Anthropic dialect's {@link DialectStreamRenderer}. */
export class AnthropicStreamRenderer implements DialectStreamRenderer {
  readonly #meta: RenderMeta;
  /** The open block: its key (`text`, `reasoning`, `tool:<i>`) and index. */
  #open: { key: string; index: number } | null = null;
  #blocks = 0;
  /** The block index of each tool call, by its position in the provider's answer. */
  readonly #tools = new Map<number, number>();

  constructor(meta: RenderMeta) {
    this.#meta = meta;
  }

  start(): string[] {
    const message = {
      id: this.#meta.id,
      type: "message",
      role: "assistant",
      model: this.#meta.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return [sse("message_start", { message }), sse("ping", {})];
  }

  #close(events: string[]): void {
    if (this.#open === null) return;
    events.push(sse("content_block_stop", { index: this.#open.index }));
    this.#open = null;
  }

  #begin(events: string[], key: string, block: Record<string, unknown>): number {
    this.#close(events);
    const index = this.#blocks++;
    this.#open = { key, index };
    events.push(sse("content_block_start", { index, content_block: block }));
    return index;
  }

  delta(delta: AnswerDelta): string[] {
    const events: string[] = [];
    const key = delta.kind === "tool_call" ? `tool:${delta.index}` : delta.kind;
    let index = this.#open?.key === key ? this.#open.index : -1;
    if (delta.kind === "tool_call") {
      const known = this.#tools.get(delta.index);
      if (index < 0 && known !== undefined) index = known; // a late piece of a stopped block
      if (index < 0) {
        index = this.#begin(events, key, {
          type: "tool_use",
          id: delta.id ?? `toolu_${this.#meta.id}_${delta.index}`,
          name: delta.name ?? "",
          input: {},
        });
        this.#tools.set(delta.index, index);
      }
      if (delta.arguments) {
        const piece = { type: "input_json_delta", partial_json: delta.arguments };
        events.push(sse("content_block_delta", { index, delta: piece }));
      }
      return events;
    }
    if (index < 0) {
      index = this.#begin(
        events,
        key,
        delta.kind === "text"
          ? { type: "text", text: "" }
          : { type: "thinking", thinking: "", signature: "" },
      );
    }
    const piece = delta.kind === "text"
      ? { type: "text_delta", text: delta.text }
      : { type: "thinking_delta", thinking: delta.text };
    events.push(sse("content_block_delta", { index, delta: piece }));
    return events;
  }

  end(outcome: DialectOutcome): string[] {
    const events: string[] = [];
    this.#close(events);
    events.push(
      sse("message_delta", {
        delta: { stop_reason: nativeStopReason(outcome.finishReason), stop_sequence: null },
        usage: anthropicUsage(outcome.usage),
      }),
      sse("message_stop", {}),
    );
    return events;
  }

  error(message: string): string[] {
    return [sse("error", { error: { type: "api_error", message } })];
  }
}
