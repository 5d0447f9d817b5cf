/**
 * Server-sent events: an incremental splitter that turns a byte stream into events while
 * keeping each event's text, so a relay can forward events unchanged, one by one.
 *
 * @module
 */

/** One server-sent event. */
export interface SseEvent {
  /** The event's lines (line endings normalised to `\n`, no trailing blank line). */
  raw: string;
  /** The `data:` lines joined by `\n`; null for an event without data (e.g. a comment). */
  data: string | null;
  /** The `event:` field, null when absent. */
  event: string | null;
}

function parseEvent(raw: string): SseEvent {
  const data: string[] = [];
  let event: string | null = null;
  for (const line of raw.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
  }
  return { raw, data: data.length > 0 ? data.join("\n") : null, event };
}

/** Splits a byte stream into {@link SseEvent}s as the bytes arrive. */
export class SseSplitter {
  #decoder = new TextDecoder();
  #buffer = "";
  #pendingCR = false;

  /** Feeds bytes; returns the events completed by them. */
  push(bytes: Uint8Array | string): SseEvent[] {
    let text = typeof bytes === "string" ? bytes : this.#decoder.decode(bytes, { stream: true });
    if (this.#pendingCR) {
      text = "\r" + text;
      this.#pendingCR = false;
    }
    if (text.endsWith("\r")) {
      this.#pendingCR = true;
      text = text.slice(0, -1);
    }
    this.#buffer += text.replace(/\r\n?/g, "\n");
    return this.#drain();
  }

  /** Ends the stream; returns a last event not followed by a blank line, if any. */
  end(): SseEvent[] {
    this.#buffer += this.#decoder.decode() + (this.#pendingCR ? "\n" : "");
    this.#pendingCR = false;
    const out = this.#drain();
    const rest = this.#buffer.replace(/\n+$/, "");
    this.#buffer = "";
    if (rest.trim() !== "") out.push(parseEvent(rest));
    return out;
  }

  #drain(): SseEvent[] {
    const out: SseEvent[] = [];
    for (;;) {
      // Skip blank lines between events.
      const start = this.#buffer.search(/[^\n]/);
      if (start === -1) {
        this.#buffer = "";
        break;
      }
      if (start > 0) this.#buffer = this.#buffer.slice(start);
      const end = this.#buffer.indexOf("\n\n");
      if (end === -1) break;
      out.push(parseEvent(this.#buffer.slice(0, end)));
      this.#buffer = this.#buffer.slice(end + 2);
    }
    return out;
  }
}

/** Serialises one event: its raw lines followed by a blank line. */
export function formatSseEvent(event: Pick<SseEvent, "raw">): string {
  return event.raw + "\n\n";
}

/** Serialises a `data:` event carrying JSON (or a literal string such as `[DONE]`). */
export function sseData(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}
