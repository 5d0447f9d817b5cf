/**
 * Byte chunks handed over by a producer (a socket, an in-process handler) and read as an
 * async iterable, in order, ended by `close()` with or without an error. With a flow
 * control, the producer is paused while more than `highBytes` wait unread and resumed
 * once the reader has taken them. A reader that lags takes what waits as one chunk (up to
 * {@link MAX_JOINED_BYTES}): a relay behind its producer then does one step, and one
 * write, for many small chunks.
 *
 * @module
 */
import { concatBytes } from "../../kit/util/bytes.ts";

/** Most bytes of waiting chunks joined into one read. */
export const MAX_JOINED_BYTES = 256 * 1024;

/** How a {@link ChunkQueue} slows its producer down. */
export interface FlowControl {
  pause(): void;
  resume(): void;
  /** Unread bytes that pause the producer. @default 1 MiB */
  highBytes?: number;
}

/** Byte chunks written by a producer, read as an async iterable. */
export class ChunkQueue implements AsyncIterable<Uint8Array> {
  readonly #chunks: Uint8Array[] = [];
  #head = 0;
  #queued = 0;
  #paused = false;
  #done = false;
  #error: unknown = null;
  #wake: (() => void) | null = null;
  readonly #flow: FlowControl | null;
  readonly #high: number;

  constructor(flow: FlowControl | null = null) {
    this.#flow = flow;
    this.#high = flow?.highBytes ?? 1 << 20;
  }

  /** Queues one chunk for the reader. */
  push(chunk: Uint8Array): void {
    if (this.#done) return;
    this.#chunks.push(chunk);
    this.#queued += chunk.byteLength;
    if (this.#flow !== null && !this.#paused && this.#queued > this.#high) {
      this.#paused = true;
      this.#flow.pause();
    }
    this.#notify();
  }

  /** Ends the stream: the reader gets what is queued, then the error if one is given. */
  close(error: unknown = null): void {
    if (this.#done) return;
    this.#done = true;
    this.#error = error;
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }

  /** The next chunk, joined with those waiting behind it (within {@link MAX_JOINED_BYTES}). */
  #take(): Uint8Array {
    const first = this.#chunks[this.#head]!;
    let end = this.#head + 1;
    let size = first.byteLength;
    while (end < this.#chunks.length && size + this.#chunks[end]!.byteLength <= MAX_JOINED_BYTES) {
      size += this.#chunks[end++]!.byteLength;
    }
    const chunk = end > this.#head + 1 ? concatBytes(this.#chunks.slice(this.#head, end)) : first;
    for (let i = this.#head; i < end; i++) this.#chunks[i] = undefined as unknown as Uint8Array;
    this.#head = end;
    if (this.#head === this.#chunks.length) {
      this.#chunks.length = 0;
      this.#head = 0;
    }
    this.#queued -= size;
    if (this.#paused && this.#queued <= this.#high / 2) {
      this.#paused = false;
      this.#flow!.resume();
    }
    return chunk;
  }

  /**
   * Every chunk left, when the stream already ended without an error (a short reply whose
   * last byte came in the read that brought its head); null while more may come. Takes
   * them: the iteration then ends at once.
   */
  takeAllIfEnded(): Uint8Array[] | null {
    if (!this.#done || this.#error !== null) return null;
    const rest = this.#chunks.slice(this.#head);
    this.#chunks.length = 0;
    this.#head = 0;
    this.#queued = 0;
    return rest;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Uint8Array> {
    for (;;) {
      if (this.#head < this.#chunks.length) {
        yield this.#take();
        continue;
      }
      if (this.#done) {
        if (this.#error !== null) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }
}
