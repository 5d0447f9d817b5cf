/**
 * Byte helpers.
 *
 * @module
 */

/** Joins byte chunks into one array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.byteLength;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.byteLength;
  }
  return out;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The UTF-8 text of chunks written as text or bytes; one text chunk is returned as it is. */
export function chunksText(parts: readonly (string | Uint8Array)[]): string {
  if (parts.length === 1 && typeof parts[0] === "string") return parts[0];
  if (parts.every((p) => typeof p === "string")) return parts.join("");
  return decoder.decode(
    concatBytes(parts.map((p) => typeof p === "string" ? encoder.encode(p) : p)),
  );
}
