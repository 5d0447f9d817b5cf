/**
 * Reading a streamed OpenAI Responses answer for the relay: every event is relayed as it
 * comes; `response.completed` or `response.incomplete` ends the stream and carries the
 * whole response, which is what the trace records (the items of `output_item.done` events
 * stand in when a provider sends it without its output). `response.failed` and `error`
 * events report a provider error. Each event costs one JSON parse.
 *
 * @module
 */
import { isRecord } from "../../../kit/util/is_record.ts";
import type {
  DialectOutcome,
  DialectStreamReader,
  StreamVerdict,
} from "../../../kit/wire/dialect.ts";
import { isDone, type SseEvent } from "../../../kit/wire/sse.ts";
import { outcomeOfResponse, responseFailure } from "./response.ts";

/** The events that end a Responses stream with an answer. */
const FINAL_EVENTS: readonly string[] = ["response.completed", "response.incomplete"];

/** The message of an `error` event (its code when it has none). */
function errorText(error: unknown): string {
  if (isRecord(error)) {
    if (typeof error.message === "string" && error.message !== "") return error.message;
    if (typeof error.code === "string" && error.code !== "") return error.code;
  }
  return JSON.stringify(error ?? null);
}

/** The Responses dialect's {@link DialectStreamReader}. */
export class ResponsesStreamReader implements DialectStreamReader {
  #final: Record<string, unknown> | null = null;
  readonly #items: unknown[] = [];

  read(event: SseEvent): StreamVerdict {
    if (event.data === null) return { kind: "relay" };
    // Responses streams end on their final event; a `[DONE]` before it ends them unanswered
    if (isDone(event.data)) return { kind: "terminal" };
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      data = undefined;
    }
    const type = isRecord(data) ? data.type ?? event.event : undefined;
    if (!isRecord(data) || typeof type !== "string") {
      return { kind: "malformed", data: event.data.slice(0, 200) };
    }
    if (type === "error") return { kind: "error", message: errorText(data.error ?? data) };
    if (type === "response.failed") {
      const response = isRecord(data.response) ? data.response : {};
      return { kind: "error", message: responseFailure(response) ?? "failed" };
    }
    if (type === "response.output_item.done" && isRecord(data.item)) this.#items.push(data.item);
    if (FINAL_EVENTS.includes(type)) {
      if (!isRecord(data.response)) return { kind: "malformed", data: event.data.slice(0, 200) };
      this.#final = data.response;
      return { kind: "terminal" };
    }
    return { kind: "relay" };
  }

  get answered(): boolean {
    return this.#final !== null;
  }

  result(): DialectOutcome {
    const response = this.#final ?? {};
    const output = Array.isArray(response.output) && response.output.length > 0
      ? response.output
      : this.#items;
    return outcomeOfResponse({ ...response, output });
  }
}
