/**
 * `traces.jsonl`: one episode per line, each line one write, flushed to disk on a
 * short interval and at close, so a kill can tear at most the last line.
 *
 * @module
 */
import { closeSync, fsyncSync, openSync, writeSync } from "node:fs";

/** Appends JSON lines to a file with periodic fsync. */
export class TracesWriter {
  #fd: number;
  #dirty = false;
  #timer: ReturnType<typeof setInterval>;
  #closed = false;
  /** Lines written by this writer. */
  lines = 0;

  /** Opens `path` for appending; fsyncs at most every `syncMs` milliseconds. */
  constructor(path: string, syncMs = 1000) {
    this.#fd = openSync(path, "a");
    this.#timer = setInterval(() => this.sync(), syncMs);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  /** Appends one value as a JSON line, in a single write. */
  append(value: unknown): void {
    if (this.#closed) throw new Error("traces file is closed");
    const buf = new TextEncoder().encode(JSON.stringify(value) + "\n");
    let off = 0;
    while (off < buf.length) off += writeSync(this.#fd, buf, off, buf.length - off);
    this.#dirty = true;
    this.lines++;
  }

  /** Flushes written lines to disk. */
  sync(): void {
    if (this.#closed || !this.#dirty) return;
    fsyncSync(this.#fd);
    this.#dirty = false;
  }

  /** Syncs and closes; idempotent. */
  close(): void {
    if (this.#closed) return;
    clearInterval(this.#timer);
    this.sync();
    closeSync(this.#fd);
    this.#closed = true;
  }
}
