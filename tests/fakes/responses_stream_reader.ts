/**
 * A strict reader of an OpenAI Responses event stream, for tests to check what a program
 * was sent: every event JSON with a `type` (the same as its `event:` line when there is
 * one), sequence numbers counting up, `response.created` first, an item added before its
 * parts and deltas, text and arguments done equal to their deltas joined, every item done,
 * and one final event (`response.completed`, `incomplete` or `failed`) last. Written here,
 * apart from the dialect it checks.
 *
 * @module
 */

type Json = Record<string, unknown>;

/** What a stream carried. */
export interface ReadStream {
  /** Each event's data, in order. */
  events: Json[];
  /** The final event's `response`. */
  response: Json;
}

function fail(message: string, at: number): never {
  throw new Error(`Responses stream event ${at}: ${message}`);
}

/** Reads `text` (a whole `text/event-stream` body); throws at the first thing out of order. */
export function readResponsesStream(text: string): ReadStream {
  const blocks = text.replace(/\r\n?/g, "\n").split("\n\n").filter((b) => b.trim() !== "");
  const events: Json[] = [];
  let final: Json | null = null;
  const items = new Map<number, { done: boolean; deltas: Map<number, string>; args: string }>();
  for (const [at, block] of blocks.entries()) {
    let name: string | null = null;
    const data: string[] = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) continue;
      if (line.startsWith("event:")) name = line.slice(6).trim();
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      else fail(`unexpected line ${JSON.stringify(line)}`, at);
    }
    if (data.length === 0) continue; // a comment
    const raw = data.join("\n");
    if (raw === "[DONE]") {
      if (final === null) fail("[DONE] before the final event", at);
      continue;
    }
    if (final !== null) fail("an event after the final event", at);
    const event = JSON.parse(raw) as Json;
    const type = event.type;
    if (typeof type !== "string") fail("no type", at);
    if (name !== null && name !== type) fail(`event: ${name} carries type ${type}`, at);
    if (event.sequence_number !== events.length) {
      fail(`sequence_number ${event.sequence_number}, expected ${events.length}`, at);
    }
    if (events.length === 0 && type !== "response.created") fail(`${type} before created`, at);
    events.push(event);
    const index = event.output_index as number;
    const item = items.get(index);
    switch (type) {
      case "response.created":
        if (events.length !== 1) fail("a second response.created", at);
        break;
      case "response.output_item.added":
        if (item) fail(`item ${index} added twice`, at);
        if (index !== items.size) fail(`item ${index} added out of order`, at);
        items.set(index, { done: false, deltas: new Map(), args: "" });
        break;
      case "response.output_item.done":
        if (!item || item.done) fail(`item ${index} done without being open`, at);
        item.done = true;
        break;
      case "response.content_part.added":
        if (!item || item.done) fail(`a part of item ${index}, which is not open`, at);
        item.deltas.set(event.content_index as number, "");
        break;
      case "response.output_text.delta": {
        const c = event.content_index as number;
        if (!item || item.done || !item.deltas.has(c)) fail(`a delta before its part`, at);
        item.deltas.set(c, item.deltas.get(c)! + String(event.delta));
        break;
      }
      case "response.output_text.done": {
        const c = event.content_index as number;
        if (!item || item.deltas.get(c) !== event.text) fail("text done differs from deltas", at);
        break;
      }
      case "response.function_call_arguments.delta":
        if (!item || item.done) fail(`arguments of item ${index}, which is not open`, at);
        item.args += String(event.delta);
        break;
      case "response.function_call_arguments.done":
        if (!item || item.args !== event.arguments) fail("arguments differ from deltas", at);
        break;
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
        for (const [i, open] of items) if (!open.done) fail(`item ${i} never done`, at);
        final = event.response as Json;
        if (typeof final !== "object" || final === null) fail("no response", at);
        break;
    }
  }
  if (final === null) throw new Error("Responses stream ended without its final event");
  return { events, response: final };
}
