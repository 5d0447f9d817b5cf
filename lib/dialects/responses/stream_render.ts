/**
 * A translated answer streamed as OpenAI Responses, piece by piece as the provider's
 * events arrive: `response.created` and `response.in_progress` first, then one output item
 * per kind of piece (a reasoning summary, the message's text, each function call) added
 * when its first piece comes, its deltas, and its `.done` events when another item begins;
 * at the end `response.completed` (or `response.incomplete` for an answer cut at its token
 * cap) carrying the whole response. A provider error mid-stream is an `error` event.
 *
 * @module
 */
import type {
  AnswerDelta,
  DialectOutcome,
  DialectStreamRenderer,
  RenderMeta,
} from "../../../kit/wire/dialect.ts";
import { responseObject } from "./render.ts";

type Item = Record<string, unknown>;

/** The item being streamed: its key (`text`, `reasoning`, `tool:<i>`), position and text. */
interface OpenItem {
  key: string;
  index: number;
  item: Item;
  text: string[];
}

/** The Responses dialect's {@link DialectStreamRenderer}. */
export class ResponsesStreamRenderer implements DialectStreamRenderer {
  readonly #meta: RenderMeta;
  readonly #output: Item[] = [];
  #open: OpenItem | null = null;
  #sequence = 0;

  constructor(meta: RenderMeta) {
    this.#meta = meta;
  }

  #event(events: string[], type: string, data: Item): void {
    const payload = JSON.stringify({ type, sequence_number: this.#sequence++, ...data });
    events.push(`event: ${type}\ndata: ${payload}\n\n`);
  }

  start(): string[] {
    const empty: DialectOutcome = {
      message: { role: "assistant", content: null },
      finishReason: null,
      usage: null,
    };
    const response = { ...responseObject(empty, this.#meta, []), status: "in_progress" };
    const events: string[] = [];
    this.#event(events, "response.created", { response });
    this.#event(events, "response.in_progress", { response });
    return events;
  }

  #close(events: string[]): void {
    const open = this.#open;
    if (open === null) return;
    this.#open = null;
    const at = { item_id: open.item.id, output_index: open.index };
    const text = open.text.join("");
    const item = open.item;
    if (item.type === "message") {
      const part = { type: "output_text", text, annotations: [] };
      this.#event(events, "response.output_text.done", {
        ...at,
        content_index: 0,
        text,
        logprobs: [],
      });
      this.#event(events, "response.content_part.done", { ...at, content_index: 0, part });
      Object.assign(item, { status: "completed", content: [part] });
    } else if (item.type === "reasoning") {
      const part = { type: "summary_text", text };
      this.#event(events, "response.reasoning_summary_text.done", {
        ...at,
        summary_index: 0,
        text,
      });
      this.#event(events, "response.reasoning_summary_part.done", {
        ...at,
        summary_index: 0,
        part,
      });
      item.summary = [part];
    } else {
      this.#event(events, "response.function_call_arguments.done", {
        ...at,
        name: item.name,
        arguments: text,
      });
      Object.assign(item, { status: "completed", arguments: text });
    }
    this.#event(events, "response.output_item.done", { output_index: open.index, item });
  }

  #begin(events: string[], key: string, item: Item, shown: Item): OpenItem {
    this.#close(events);
    const open: OpenItem = { key, index: this.#output.length, item, text: [] };
    this.#output.push(item);
    this.#open = open;
    this.#event(events, "response.output_item.added", { output_index: open.index, item: shown });
    return open;
  }

  delta(delta: AnswerDelta): string[] {
    const events: string[] = [];
    const key = delta.kind === "tool_call" ? `tool:${delta.index}` : delta.kind;
    let open = this.#open?.key === key ? this.#open : null;
    const id = this.#meta.id;
    const n = this.#output.length;
    if (open === null) {
      if (delta.kind === "text") {
        const item = { id: `msg_${id}_${n}`, type: "message", role: "assistant", content: [] };
        open = this.#begin(events, key, item, { ...item, status: "in_progress" });
        this.#event(events, "response.content_part.added", {
          item_id: item.id,
          output_index: open.index,
          content_index: 0,
          part: { type: "output_text", text: "", annotations: [] },
        });
      } else if (delta.kind === "reasoning") {
        const item = { id: `rs_${id}_${n}`, type: "reasoning", summary: [] };
        open = this.#begin(events, key, item, { ...item });
        this.#event(events, "response.reasoning_summary_part.added", {
          item_id: item.id,
          output_index: open.index,
          summary_index: 0,
          part: { type: "summary_text", text: "" },
        });
      } else {
        const item = {
          id: `fc_${id}_${n}`,
          type: "function_call",
          call_id: delta.id ?? `call_${id}_${delta.index}`,
          name: delta.name ?? "",
          arguments: "",
        };
        open = this.#begin(events, key, item, { ...item, status: "in_progress" });
      }
    }
    const at = { item_id: open.item.id, output_index: open.index };
    const piece = delta.kind === "tool_call" ? delta.arguments ?? "" : delta.text;
    if (piece === "") return events;
    open.text.push(piece);
    if (delta.kind === "text") {
      this.#event(events, "response.output_text.delta", {
        ...at,
        content_index: 0,
        delta: piece,
        logprobs: [],
      });
    } else if (delta.kind === "reasoning") {
      this.#event(events, "response.reasoning_summary_text.delta", {
        ...at,
        summary_index: 0,
        delta: piece,
      });
    } else this.#event(events, "response.function_call_arguments.delta", { ...at, delta: piece });
    return events;
  }

  end(outcome: DialectOutcome): string[] {
    const events: string[] = [];
    this.#close(events);
    const response = responseObject(outcome, this.#meta, this.#output);
    const type = response.status === "incomplete" ? "response.incomplete" : "response.completed";
    this.#event(events, type, { response });
    return events;
  }

  error(message: string): string[] {
    const events: string[] = [];
    this.#event(events, "error", { code: "server_error", message, param: null });
    return events;
  }
}
