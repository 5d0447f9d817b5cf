/**
 * Streamed Anthropic Messages: the answer reassembled from its events (`message_start`,
 * `content_block_start`/`_delta`/`_stop`, `message_delta`, `message_stop`; `ping` and
 * unknown events passed on) and the reader that classifies each event for the relay.
 * `message_stop` is the terminal event; an `error` event fails the call. Each event costs
 * one JSON parse; text deltas are kept as parts and joined once, at the end.
 *
 * @module
 */
import { isRecord } from "../../../kit/util/is_record.ts";
import type {
  DialectOutcome,
  DialectStreamReader,
  StreamVerdict,
} from "../../../kit/wire/dialect.ts";
import type { SseEvent } from "../../../kit/wire/sse.ts";
import { assistantFromBlocks, parseUsage, str } from "./codec.ts";

/** One content block being streamed: its start, and the deltas of each field. */
interface PartialBlock {
  block: Record<string, unknown>;
  parts: Map<string, string[]>;
  json: string[] | null;
}

/** The delta types that append to a field of their block, and the field. */
const FIELD_DELTAS: Readonly<Record<string, string>> = {
  text_delta: "text",
  thinking_delta: "thinking",
  signature_delta: "signature",
};

/** The Anthropic dialect's {@link DialectStreamReader}. */
export class AnthropicStreamReader implements DialectStreamReader {
  #message: Record<string, unknown> | null = null;
  #usage: Record<string, unknown> = {};
  #stopReason: string | null = null;
  readonly #blocks = new Map<number, PartialBlock>();

  read(event: SseEvent): StreamVerdict {
    if (event.data === null) return { kind: "relay" };
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch {
      json = undefined;
    }
    if (!isRecord(json)) return { kind: "malformed", data: event.data.slice(0, 200) };
    switch (json.type) {
      case "message_start": {
        const message = isRecord(json.message) ? json.message : {};
        this.#message = message;
        this.#usage = isRecord(message.usage) ? { ...message.usage } : {};
        this.#stopReason = str(message.stop_reason);
        break;
      }
      case "content_block_start": {
        const index = typeof json.index === "number" ? json.index : this.#blocks.size;
        const block = isRecord(json.content_block) ? { ...json.content_block } : {};
        this.#blocks.set(index, { block, parts: new Map(), json: null });
        break;
      }
      case "content_block_delta":
        this.#delta(json);
        break;
      case "message_delta": {
        const delta = isRecord(json.delta) ? json.delta : {};
        const reason = str(delta.stop_reason);
        if (reason !== null) this.#stopReason = reason;
        if (isRecord(json.usage)) Object.assign(this.#usage, json.usage);
        break;
      }
      case "message_stop":
        return { kind: "terminal" };
      case "error": {
        const error = isRecord(json.error) ? json.error : {};
        return { kind: "error", message: str(error.message) ?? JSON.stringify(json.error) };
      }
    }
    return { kind: "relay" };
  }

  #delta(event: Record<string, unknown>): void {
    const index = typeof event.index === "number" ? event.index : 0;
    let partial = this.#blocks.get(index);
    if (partial === undefined) {
      partial = { block: { type: "text", text: "" }, parts: new Map(), json: null };
      this.#blocks.set(index, partial);
    }
    const delta = isRecord(event.delta) ? event.delta : {};
    const type = str(delta.type);
    if (type === "input_json_delta") {
      (partial.json ??= []).push(str(delta.partial_json) ?? "");
      return;
    }
    const field = type !== null && Object.hasOwn(FIELD_DELTAS, type) ? FIELD_DELTAS[type]! : null;
    if (field === null) return;
    let parts = partial.parts.get(field);
    if (parts === undefined) {
      parts = [str(partial.block[field]) ?? ""];
      partial.parts.set(field, parts);
    }
    parts.push(str(delta[field]) ?? "");
  }

  get answered(): boolean {
    return this.#message !== null;
  }

  result(): DialectOutcome {
    const blocks = [...this.#blocks.entries()].sort((a, b) => a[0] - b[0]).map(([, p]) => {
      const block = { ...p.block };
      for (const [field, parts] of p.parts) block[field] = parts.join("");
      if (p.json !== null) block.input = parseInput(p.json.join(""));
      return block;
    });
    const usage = this.#message === null ? null : parseUsage(this.#usage);
    return { message: assistantFromBlocks(blocks), finishReason: this.#stopReason, usage };
  }
}

/** A tool call's streamed input: `{}` when empty, the text itself when it is not JSON. */
function parseInput(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
