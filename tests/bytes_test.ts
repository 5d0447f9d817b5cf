/** kit/util/bytes.ts: chunks joined as bytes, and as text whether written as text or bytes. */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { chunksText, concatBytes } from "../kit/util/bytes.ts";

describe("concatBytes", () => {
  it("joins chunks in order into a fresh array", () => {
    const a = Uint8Array.of(1, 2);
    const joined = concatBytes([a, Uint8Array.of(), Uint8Array.of(3)]);
    assert.deepEqual([...joined], [1, 2, 3]);
    joined[0] = 9;
    assert.equal(a[0], 1, "the result shares no memory with its parts");
  });
});

describe("chunksText", () => {
  const bytes = (...b: number[]) => Uint8Array.from(b);
  it("reads text chunks, byte chunks and a mix as one UTF-8 text", () => {
    assert.equal(chunksText(['{"a":', "1}"]), '{"a":1}');
    // "é" is 0xc3 0xa9: split across two byte chunks, it must still decode as one character
    assert.equal(chunksText([bytes(0x61, 0xc3), bytes(0xa9, 0x7a)]), "aéz");
    assert.equal(chunksText(["a", bytes(0xc3, 0xa9), "z"]), "aéz");
    assert.equal(chunksText([]), "");
  });
});
