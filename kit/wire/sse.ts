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
  /** How much of the buffer's pending event has been searched for its end. */
  #scanned = 0;

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
    this.#scanned = 0;
    if (rest.trim() !== "") out.push(parseEvent(rest));
    return out;
  }

  /**
   * Takes the complete events off the buffer. The buffer is read once per call: a long
   * event arriving in many pieces is searched only where new text came in.
   */
  #drain(): SseEvent[] {
    const out: SseEvent[] = [];
    const buffer = this.#buffer;
    let at = 0;
    for (;;) {
      // Skip blank lines between events.
      while (at < buffer.length && buffer.charCodeAt(at) === NEWLINE) at++;
      if (at >= buffer.length) {
        this.#buffer = "";
        this.#scanned = 0;
        return out;
      }
      // The first pending event was searched up to #scanned before this text came in.
      const end = buffer.indexOf("\n\n", Math.max(at, this.#scanned - 1));
      this.#scanned = 0;
      if (end === -1) {
        this.#buffer = at > 0 ? buffer.slice(at) : buffer;
        this.#scanned = this.#buffer.length;
        return out;
      }
      out.push(parseEvent(buffer.slice(at, end)));
      at = end + 2;
    }
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
