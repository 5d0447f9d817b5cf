/**
 * `traces.jsonl`: one episode per line. Each line is one `write(2)` of the JSON text and
 * its newline, flushed to disk (fsync) on a short interval and at close, so a kill can
 * tear at most the last line and a signal between two lines tears none. Reading is
 * streamed line by line, so a resume never holds the whole file in memory.
 *
 * @module
 */
import {
  closeSync,
  fstatSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  writeSync,
} from "node:fs";
import { concatBytes } from "../../kit/util/bytes.ts";
import { episodeJson } from "../../kit/trace/wire_json.ts";
import { asOutputError } from "../../kit/util/fs_errors.ts";
import { redact } from "../../kit/secrets.ts";

const encoder = new TextEncoder();

/** Appends JSON lines to a file with periodic fsync. */
export class TracesWriter {
  #fd: number;
  #dirty = false;
  #timer: ReturnType<typeof setInterval>;
  #closed = false;
  #syncing = false;
  #buf = new Uint8Array(1 << 16);
  readonly #path: string;
  /** Bytes in the file after the last whole line (a failed write is cut back to it). */
  #size: number;
  /** Lines written by this writer. */
  lines = 0;

  /**
   * Opens `path` for appending; fsyncs at most every `syncMs` milliseconds. A write that
   * fails (disk full, ...) is cut back to the last whole line and throws an OutputError.
   */
  constructor(path: string, syncMs = 1000) {
    this.#path = path;
    try {
      this.#fd = openSync(path, "a");
      this.#size = fstatSync(this.#fd).size;
    } catch (err) {
      throw asOutputError(err, "traces file", path) ?? err;
    }
    this.#timer = setInterval(() => this.#syncSoon(), syncMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Appends one value as a JSON line, in a single write. */
  append(value: unknown): void {
    this.appendLine(redact(episodeJson(value)));
  }

  /** Appends one line of text (without its newline), in a single write. */
  appendLine(line: string): void {
    if (this.#closed) throw new Error("traces file is closed");
    const text = line + "\n";
    // UTF-8 takes at most 3 bytes per UTF-16 unit; the buffer is reused across lines.
    if (this.#buf.length < text.length * 3) this.#buf = new Uint8Array(text.length * 3);
    const size = encoder.encodeInto(text, this.#buf).written;
    try {
      let off = writeSync(this.#fd, this.#buf, 0, size);
      // A regular file takes the whole buffer at once; the loop only guards short writes.
      while (off < size) off += writeSync(this.#fd, this.#buf, off, size - off);
    } catch (err) {
      try {
        ftruncateSync(this.#fd, this.#size); // no torn line left behind
      } catch {
        // not a regular file; nothing to cut
      }
      throw asOutputError(err, "traces file", this.#path) ?? err;
    }
    this.#size += size;
    if (this.#buf.length > 1 << 24) this.#buf = new Uint8Array(1 << 16); // after a huge line
    this.#dirty = true;
    this.lines++;
  }

  /** Flushes written lines to disk now (blocking). */
  sync(): void {
    if (this.#closed || !this.#dirty) return;
    this.#dirty = false;
    try {
      fsyncSync(this.#fd);
    } catch {
      this.#dirty = true; // retried at the next tick or at close
    }
  }

  /** Flushes written lines to disk in the background (the interval's flush). */
  #syncSoon(): void {
    if (this.#closed || !this.#dirty || this.#syncing) return;
    this.#dirty = false;
    this.#syncing = true;
    const fd = this.#fd;
    fsync(fd, (err) => {
      this.#syncing = false;
      if (this.#closed) return void closeQuietly(fd); // close() left the descriptor to us
      if (err) this.#dirty = true;
    });
  }

  /** True once closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Syncs and closes; idempotent. While a background flush still holds the descriptor, it is
   * closed when that flush returns, never under it (Deno's runtime crashed on a descriptor
   * closed while its fsync ran on another thread).
   */
  close(): void {
    if (this.#closed) return;
    clearInterval(this.#timer);
    if (this.#syncing) this.#dirty = true; // a background flush may not be done yet
    this.sync();
    this.#closed = true;
    if (!this.#syncing) closeSync(this.#fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** One line of a file as read: its text, and whether a newline ended it. */
export interface FileLine {
  text: string;
  /** False only for a last line cut short (no trailing newline): a torn write. */
  terminated: boolean;
}

/** Reads a file line by line with a fixed-size buffer (synchronous, constant memory per line). */
export function* readLines(path: string, chunkBytes = 1 << 20): Generator<FileLine> {
  const fd = openSync(path, "r");
  const decoder = new TextDecoder("utf-8");
  try {
    const buf = new Uint8Array(chunkBytes);
    let pending: Uint8Array[] = [];
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(10, start);
        if (nl === -1 || nl >= n) break;
        const piece = buf.subarray(start, nl);
        const text = decoder.decode(pending.length ? concatBytes([...pending, piece]) : piece);
        pending = [];
        yield { text, terminated: true };
        start = nl + 1;
      }
      if (start < n) pending.push(buf.slice(start, n));
    }
    if (pending.length) {
      yield { text: decoder.decode(concatBytes(pending)), terminated: false };
    }
  } finally {
    closeSync(fd);
  }
}
