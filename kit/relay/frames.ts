/**
 * The model relay's framing: every frame is a {@link encodeEnvelope} envelope
 * (`kit/wire/envelope.ts`) whose flag byte is the frame's kind and whose payload is a 4-byte
 * big-endian connection id followed by the frame's bytes. One live program's stdin and
 * stdout carry the frames of every connection at once:
 *
 * - `HELLO` (sandbox → host, once): the id field holds the port the relay listens on.
 * - `OPEN` (sandbox → host): a program connected; the host connects to the server.
 * - `DATA` (both ways): bytes of that connection, in order.
 * - `END` (both ways): that side finished writing (a TCP half-close).
 * - `RESET` (both ways): that side's socket closed; the other closes its own.
 *
 * The relay carries TCP bytes, not HTTP messages: JSON answers, server-sent events and
 * keep-alive connections pass as they are, and a program that closes its connection closes
 * the host's, which the interception server reads as a cancelled call.
 *
 * @module
 */
import { encodeEnvelope } from "../wire/envelope.ts";

/** The relay listens; the id field holds its port. */
export const HELLO = 0x10;
/** A program opened a connection. */
export const OPEN = 0x11;
/** Bytes of a connection. */
export const DATA = 0x12;
/** One side of a connection finished writing. */
export const END = 0x13;
/** One side of a connection closed. */
export const RESET = 0x14;

/** Bytes of the id field that starts every frame's payload. */
export const ID_BYTES = 4;

/** Frames `data` of connection `id` as kind `kind`. */
export function encodeFrame(kind: number, id: number, data?: Uint8Array): Uint8Array {
  const payload = new Uint8Array(ID_BYTES + (data?.byteLength ?? 0));
  new DataView(payload.buffer).setUint32(0, id, false);
  if (data) payload.set(data, ID_BYTES);
  return encodeEnvelope(kind, payload);
}

/** The connection id and bytes of a frame's payload. */
export function decodeFrame(payload: Uint8Array): { id: number; data: Uint8Array } {
  if (payload.byteLength < ID_BYTES) throw new Error("relay frame shorter than its id");
  const id = new DataView(payload.buffer, payload.byteOffset, payload.byteLength)
    .getUint32(0, false);
  return { id, data: payload.subarray(ID_BYTES) };
}
