/**
 * `traces.jsonl`: one episode per line. The lines finished in one turn of the event loop
 * are written together, in one `write(2)` of whole lines (a run of many short rollouts
 * makes one system call per turn, not one per episode), and each line's `written` callback
 * runs once that write returned; the file is flushed to disk (fsync) on a short interval
 * and at close. A kill can tear at most the last line and a signal between two writes tears
 * none; a kill between an episode's end and its write loses only lines not yet reported as
 * written, which a resume owes again. Reading is streamed line by line, so a resume never
 * holds the whole file in memory.
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

/** Queued text past which the lines are written at once instead of at the end of the turn. */
const MAX_QUEUED_CHARS = 1 << 20;

/** Appends JSON lines to a file, a turn's lines in one write, with periodic fsync. */
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
  /** Lines waiting for the end of the turn, their callbacks and their length in UTF-16 units. */
  #queued: string[] = [];
  #callbacks: ((() => void) | undefined)[] = [];
  #queuedChars = 0;
  #flushScheduled = false;
  /** The first failed write or `written` callback: every later append and close throws it. */
  #failure: unknown = null;
  /** Lines written by this writer. */
  lines = 0;

  /**
   * Opens `path` for appending; fsyncs at most every `syncMs` milliseconds. A write that
   * fails (disk full, ...) is cut back to the last whole line, and its OutputError is thrown
   * by the next {@link append} and by {@link close}.
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

  /**
   * Queues one value as a JSON line (serialized and redacted now); `written` runs once the
   * line is in the file, which is by the end of this turn of the event loop.
   */
  append(value: unknown, written?: () => void): void {
    this.appendLine(redact(episodeJson(value)), written);
  }

  /** Queues one line of text (without its newline); see {@link append}. */
  appendLine(line: string, written?: () => void): void {
    if (this.#closed) throw new Error("traces file is closed");
    if (this.#failure !== null) throw this.#failure;
    this.#queued.push(line);
    this.#callbacks.push(written);
    this.#queuedChars += line.length + 1;
    if (this.#queuedChars >= MAX_QUEUED_CHARS) this.flush();
    else if (!this.#flushScheduled) {
      this.#flushScheduled = true;
      setImmediate(() => {
        this.#flushScheduled = false;
        if (this.#closed) return;
        try {
          this.flush();
        } catch {
          // kept in #failure: the next append or close() throws it
        }
      });
    }
  }

  /**
   * Writes the queued lines now, in one write, then runs their callbacks; a failed write cuts
   * the file back to its last whole line, drops the queued lines and throws an OutputError; a
   * callback that throws is thrown once the others ran.
   */
  flush(): void {
    if (this.#failure !== null) throw this.#failure;
    if (this.#queued.length === 0) return;
    const lines = this.#queued;
    const callbacks = this.#callbacks;
    // UTF-8 takes at most 3 bytes per UTF-16 unit; the buffer is reused across writes.
    const most = this.#queuedChars * 3;
    if (this.#buf.length < most) this.#buf = new Uint8Array(most);
    this.#queued = [];
    this.#callbacks = [];
    this.#queuedChars = 0;
    let size = 0;
    for (const line of lines) { // each line encoded in place: no joined copy of the text
      size += encoder.encodeInto(line, this.#buf.subarray(size)).written;
      this.#buf[size++] = 10; // "\n"
    }
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
      this.#failure = asOutputError(err, "traces file", this.#path) ?? err;
      throw this.#failure;
    }
    this.#size += size;
    if (this.#buf.length > 1 << 24) this.#buf = new Uint8Array(1 << 16); // after a huge line
    this.#dirty = true;
    this.lines += callbacks.length;
    let failed: unknown = null;
    for (const written of callbacks) {
      try {
        written?.();
      } catch (err) {
        failed ??= err; // the other lines' callbacks still run
      }
    }
    if (failed !== null) {
      this.#failure ??= failed;
      throw failed;
    }
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
   * Writes the queued lines, syncs and closes; idempotent; throws the failure of a write
   * (after closing). While a background flush still holds the descriptor, it is
   * closed when that flush returns, never under it (Deno's runtime crashed on a descriptor
   * closed while its fsync ran on another thread).
   */
  close(): void {
    if (this.#closed) return;
    let failure: unknown = null;
    try {
      this.flush();
    } catch (err) {
      failure = err;
    }
    clearInterval(this.#timer);
    if (this.#syncing) this.#dirty = true; // a background flush may not be done yet
    this.sync();
    this.#closed = true;
    if (!this.#syncing) closeSync(this.#fd);
    if (failure !== null) throw failure;
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
