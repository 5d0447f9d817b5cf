import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { randomChars, randomHex } from "../kit/util/random_pool.ts";

describe("random values cut from a pool of random bytes", () => {
  it("randomHex: 2 lowercase hex digits per byte, never the same token across pool refills", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) { // 48,000 bytes: the 4 KiB pool is refilled 11 times
      const token = randomHex(24);
      assert.match(token, /^[0-9a-f]{48}$/);
      seen.add(token);
    }
    assert.equal(seen.size, 2000);
  });

  it("randomHex: every byte value occurs (the table covers 00-ff)", () => {
    const bytes = new Set<string>();
    for (let i = 0; i < 64; i++) {
      const t = randomHex(64);
      for (let j = 0; j < t.length; j += 2) bytes.add(t.slice(j, j + 2));
    }
    assert.equal(bytes.size, 256); // 4,096 draws miss one of 256 values with odds < 1e-4
  });

  it("randomChars: drawn from the alphabet only, with every letter used", () => {
    const letters = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const s = randomChars(6, "abc");
      assert.match(s, /^[abc]{6}$/);
      for (const c of s) letters.add(c);
    }
    assert.deepEqual([...letters].sort(), ["a", "b", "c"]);
  });

  it("refuses a draw larger than the pool", () => {
    assert.throws(() => randomHex(5000), RangeError);
  });
});
