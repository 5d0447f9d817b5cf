/**
 * Small random values (tokens, name suffixes) cut from random bytes drawn ahead from the
 * system's CSPRNG, as Node's own `randomUUID` does: one draw of 4 KiB serves many calls
 * instead of one system call and buffer per token. No byte is handed out twice.
 *
 * @module
 */
import { randomFillSync } from "node:crypto";

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let at = POOL_BYTES; // drawn on first use
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The offset in the pool of `n` fresh bytes (refilled when fewer are left). */
function take(n: number): number {
  if (n > POOL_BYTES) throw new RangeError(`at most ${POOL_BYTES} random bytes at once`);
  if (at + n > POOL_BYTES) {
    randomFillSync(pool);
    at = 0;
  }
  at += n;
  return at - n;
}

/** `bytes` random bytes as lowercase hex (`2 × bytes` characters). */
export function randomHex(bytes: number): string {
  const from = take(bytes);
  let out = "";
  for (let i = from; i < from + bytes; i++) out += HEX[pool[i]!];
  return out;
}

/** `count` characters drawn from `alphabet` (at most 256 characters), one random byte each. */
export function randomChars(count: number, alphabet: string): string {
  const from = take(count);
  let out = "";
  for (let i = from; i < from + count; i++) out += alphabet[pool[i]! % alphabet.length];
  return out;
}
