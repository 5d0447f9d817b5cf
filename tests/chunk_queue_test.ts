import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { ChunkQueue, MAX_JOINED_BYTES } from "../lib/clients/chunk_queue.ts";

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (chunk: Uint8Array) => new TextDecoder().decode(chunk);

describe("ChunkQueue", () => {
  it("hands a lagging reader what waits as one chunk, in order, and a prompt one each chunk", async () => {
    const queue = new ChunkQueue();
    const reader = queue[Symbol.asyncIterator]();
    for (const piece of ["a", "bc", "def"]) queue.push(bytes(piece));
    assert.equal(text((await reader.next()).value!), "abcdef");
    const next = reader.next(); // waiting before the chunk comes
    queue.push(bytes("g"));
    assert.equal(text((await next).value!), "g");
    queue.close();
    assert.equal((await reader.next()).done, true);
  });

  it("joins no more than MAX_JOINED_BYTES, and never splits a chunk", async () => {
    const queue = new ChunkQueue();
    const big = new Uint8Array(MAX_JOINED_BYTES - 10).fill(1);
    queue.push(bytes("x".repeat(5)));
    queue.push(big); // 5 + size - 10 fits
    queue.push(bytes("y".repeat(20))); // would pass the limit: read next time
    queue.close(new Error("broke off"));
    const sizes: number[] = [];
    await assert.rejects(async () => {
      for await (const chunk of queue) sizes.push(chunk.byteLength);
    }, /broke off/);
    assert.deepEqual(sizes, [MAX_JOINED_BYTES - 5, 20]);
  });

  it("hands over every chunk at once only when the stream ended without an error", async () => {
    const queue = new ChunkQueue();
    queue.push(bytes("a"));
    assert.equal(queue.takeAllIfEnded(), null); // more may come
    queue.push(bytes("b"));
    queue.close();
    assert.deepEqual(queue.takeAllIfEnded()!.map(text), ["a", "b"]);
    const rest: Uint8Array[] = [];
    for await (const chunk of queue) rest.push(chunk); // taken: the iteration ends at once
    assert.deepEqual(rest, []);
    const broken = new ChunkQueue();
    broken.push(bytes("c"));
    broken.close(new Error("broke off"));
    assert.equal(broken.takeAllIfEnded(), null); // the reader must see the error
    await assert.rejects(async () => {
      for await (const _ of broken) { /* "c", then the error */ }
    }, /broke off/);
  });

  it("pauses its producer past highBytes unread and resumes it once half is read", async () => {
    const calls: string[] = [];
    const queue = new ChunkQueue({
      pause: () => calls.push("pause"),
      resume: () => calls.push("resume"),
      highBytes: 10,
    });
    queue.push(new Uint8Array(6));
    assert.deepEqual(calls, []);
    queue.push(new Uint8Array(6));
    queue.push(new Uint8Array(6)); // already paused: no second call
    assert.deepEqual(calls, ["pause"]);
    const reader = queue[Symbol.asyncIterator]();
    assert.equal((await reader.next()).value!.byteLength, 18);
    assert.deepEqual(calls, ["pause", "resume"]);
  });
});
