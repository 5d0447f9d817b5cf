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

const NEWLINE = 0x0a;

/** Splits a byte stream into {@link SseEvent}s as the bytes arrive. */
export class SseSplitter {
  #decoder = new TextDecoder();
  #buffer = "";
  #pendingCR = false;
  /** The last input ended on a newline byte (the decoder holds nothing back). */
  #atBoundary = true;
  #verbatim = false;

  /**
   * True when the events of the last {@link push}, each written back with
   * {@link formatSseEvent}, are exactly the input of that push (the input began and ended
   * on an event boundary, with `\n` line endings and no extra blank line): a relay that
   * forwards all of them may forward the input as it came.
   */
  get verbatim(): boolean {
    return this.#verbatim;
  }

  /** Feeds bytes; returns the events completed by them. */
  push(bytes: Uint8Array | string): SseEvent[] {
    const clean = this.#atBoundary && this.#buffer === "" && !this.#pendingCR;
    let text = typeof bytes === "string" ? bytes : this.#decoder.decode(bytes, { stream: true });
    const length = text.length;
    this.#atBoundary = typeof bytes === "string"
      ? text.endsWith("\n")
      : bytes.byteLength > 0 && bytes[bytes.byteLength - 1] === NEWLINE;
    if (this.#pendingCR) {
      text = "\r" + text;
      this.#pendingCR = false;
    }
    if (text.endsWith("\r")) {
      this.#pendingCR = true;
      text = text.slice(0, -1);
    }
    this.#buffer += text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
    const events = this.#drain();
    // Anything dropped (a `\r`, a blank line) or held back makes the events shorter.
    let written = 0;
    for (const e of events) written += e.raw.length + 2;
    this.#verbatim = clean && this.#buffer === "" && this.#atBoundary && written === length;
    return events;
  }

  /** Ends the stream; returns a last event not followed by a blank line, if any. */
  end(): SseEvent[] {
    this.#buffer += this.#decoder.decode() + (this.#pendingCR ? "\n" : "");
    this.#pendingCR = false;
    this.#verbatim = false;
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
