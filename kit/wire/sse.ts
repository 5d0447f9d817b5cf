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

const NEWLINE = 0x0a;
const COLON = 0x3a;
const SPACE = 0x20;
const OPEN_BRACE = 0x7b;

/** Whether the line at `at` (ending at `end`) is of field `name`. */
function fieldAt(raw: string, at: number, end: number, name: string): boolean {
  const after = at + name.length;
  return raw.startsWith(name, at) && (after === end || raw.charCodeAt(after) === COLON);
}

/**
 * Reads one event's fields. Its lines are walked in place, and only `data` and `event`
 * lines are sliced (a blank line, a comment or another field carries nothing read here).
 */
function parseEvent(raw: string): SseEvent {
  let data: string | null = null;
  let event: string | null = null;
  for (let at = 0; at < raw.length;) {
    let end = raw.indexOf("\n", at);
    if (end === -1) end = raw.length;
    const isData = fieldAt(raw, at, end, "data");
    if (isData || fieldAt(raw, at, end, "event")) {
      let from = at + (isData ? 5 : 6);
      if (from < end && raw.charCodeAt(from) === SPACE) from++;
      const value = from < end ? raw.slice(from, end) : "";
      if (!isData) event = value;
      else data = data === null ? value : data + "\n" + value;
    }
    at = end + 1;
  }
  return { raw, data, event };
}

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

/** Whether an event's data is the `[DONE]` that ends an OpenAI stream (spaces around it aside). */
export function isDone(data: string): boolean {
  // JSON data (most events) is told apart without trimming a copy of it
  return data.charCodeAt(0) !== OPEN_BRACE && data.trim() === "[DONE]";
}

/** Serialises one event: its raw lines followed by a blank line. */
export function formatSseEvent(event: Pick<SseEvent, "raw">): string {
  return event.raw + "\n\n";
}

/** Serialises a `data:` event carrying JSON (or a literal string such as `[DONE]`). */
export function sseData(data: unknown): string {
  return `data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`;
}
