/**
 * The 5-byte message envelope shared by gRPC's length-prefixed messages and Connect's
 * streaming envelopes: one flag byte, a 4-byte big-endian payload length, the payload.
 * gRPC uses flag bit 0x01 for a compressed message; Connect adds 0x02 for its end-of-stream
 * message (plugins/runtimes/modal/grpc.ts and plugins/runtimes/prime/connect.ts frame with
 * this module).
 *
 * ```ts
 * const reader = new EnvelopeReader();
 * for (const { flags, data } of reader.push(encodeEnvelope(0, payload))) use(flags, data);
 * ```
 *
 * @module
 */

/** Bytes in an envelope's header: the flag byte and the 4-byte length. */
export const ENVELOPE_HEADER_BYTES = 5;
/** Flag bit of a compressed payload (gRPC and Connect). */
export const COMPRESSED_FLAG = 0x01;
/** Flag bit of Connect's end-of-stream envelope (its payload is JSON). */
export const END_STREAM_FLAG = 0x02;

/** One envelope: its flag byte and its payload. */
export interface Envelope {
  flags: number;
  data: Uint8Array;
}

/** Frames one payload: flag byte, uint32 big-endian length, payload. */
export function encodeEnvelope(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(ENVELOPE_HEADER_BYTES + payload.byteLength);
  out[0] = flags;
  new DataView(out.buffer).setUint32(1, payload.byteLength, false);
  out.set(payload, ENVELOPE_HEADER_BYTES);
  return out;
}

/** Options of an {@link EnvelopeReader}. */
export interface EnvelopeReaderOptions {
  /**
   * Sees each envelope's header as soon as its 5 bytes arrived, before the payload is
   * buffered; throw to refuse it (a flag the caller does not support, a length over its
   * limit). Called once per envelope.
   */
  onHeader?: (flags: number, length: number) => void;
}

/**
 * Splits a byte stream into envelopes. Chunks are kept as they arrive and joined once per
 * envelope, so a large payload that comes in many chunks is copied once.
 */
export class EnvelopeReader {
  readonly #onHeader: ((flags: number, length: number) => void) | undefined;
  #chunks: Uint8Array[] = [];
  #buffered = 0;
  /** The header of the envelope being buffered, once seen. */
  #header: { flags: number; length: number } | null = null;

  constructor(options: EnvelopeReaderOptions = {}) {
    this.#onHeader = options.onHeader;
  }

  /** Adds bytes; returns the envelopes they complete (the header hook may throw). */
  push(chunk: Uint8Array): Envelope[] {
    if (chunk.byteLength > 0) {
      this.#chunks.push(chunk);
      this.#buffered += chunk.byteLength;
    }
    const out: Envelope[] = [];
    for (;;) {
      if (this.#header === null) {
        if (this.#buffered < ENVELOPE_HEADER_BYTES) break;
        const head = this.#take(ENVELOPE_HEADER_BYTES);
        const length = new DataView(head.buffer, head.byteOffset, head.byteLength)
          .getUint32(1, false);
        this.#header = { flags: head[0]!, length };
        this.#onHeader?.(head[0]!, length);
      }
      if (this.#buffered < this.#header.length) break;
      out.push({ flags: this.#header.flags, data: this.#take(this.#header.length) });
      this.#header = null;
    }
    return out;
  }

  /** Bytes received that do not make a whole envelope yet (a header counts as 5). */
  get pending(): number {
    return this.#buffered + (this.#header === null ? 0 : ENVELOPE_HEADER_BYTES);
  }

  /** Removes the first `n` buffered bytes (n <= buffered) as one fresh array. */
  #take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let filled = 0;
    while (filled < n) {
      const first = this.#chunks[0]!;
      const used = Math.min(first.byteLength, n - filled);
      out.set(first.subarray(0, used), filled);
      filled += used;
      if (used === first.byteLength) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(used);
    }
    this.#buffered -= n;
    return out;
  }
}
