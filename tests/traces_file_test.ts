import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readLines, TracesWriter } from "../lib/run/traces_file.ts";

const openDescriptors = () => readdirSync("/proc/self/fd").length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextTurn = () => new Promise((r) => setImmediate(r));

/** Runs `body` with a fresh temp folder, removed after. */
async function inTempDir(body: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "vf-traces-"));
  try {
    await body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("TracesWriter", () => {
  it(
    "closes while a background flush runs without losing a line or a descriptor",
    { skip: !existsSync("/proc/self/fd") },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "vf-traces-"));
      try {
        await sleep(50); // let descriptors of earlier work settle
        const before = openDescriptors();
        for (let i = 0; i < 60; i++) {
          const path = join(dir, `t${i}.jsonl`);
          const writer = new TracesWriter(path, 1); // a background flush every millisecond
          writer.appendLine(`{"n":${i}}`);
          await sleep(i % 4); // sometimes a flush is under way when close() comes
          writer.appendLine(`{"n":${i},"last":true}`);
          writer.close();
          writer.close(); // idempotent
          assert.equal(writer.closed, true);
          assert.deepEqual(
            [...readLines(path)].map((l) => [l.text, l.terminated]),
            [[`{"n":${i}}`, true], [`{"n":${i},"last":true}`, true]],
          );
        }
        await sleep(200); // flushes that outlived their close() hand the descriptor back
        assert.equal(openDescriptors(), before, "every descriptor is closed in the end");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("writes a turn's lines together and calls each line's callback once the line is in the file", async () => {
    await inTempDir(async (dir) => {
      const path = join(dir, "t.jsonl");
      const writer = new TracesWriter(path);
      const seen: string[][] = [];
      const fileLines = () => readFileSync(path, "utf8").split("\n").filter(Boolean);
      for (let i = 0; i < 3; i++) writer.append({ n: i }, () => seen.push(fileLines()));
      assert.deepEqual(seen, [], "no callback before the write");
      assert.deepEqual(fileLines(), [], "nothing written within the turn");
      await nextTurn();
      const all = ['{"n":0}', '{"n":1}', '{"n":2}'];
      assert.deepEqual(seen, [all, all, all], "each callback saw every line of its write");
      assert.equal(writer.lines, 3);
      writer.append({ n: 3 });
      writer.close(); // writes what is queued
      assert.deepEqual(fileLines(), [...all, '{"n":3}']);
    });
  });

  it("a failed write drops its lines, and the next append and close throw it", {
    skip: !existsSync("/dev/full"),
  }, async () => {
    await inTempDir(async (dir) => {
      const path = join(dir, "t.jsonl");
      symlinkSync("/dev/full", path); // every write fails with ENOSPC
      const writer = new TracesWriter(path);
      let called = 0;
      writer.append({ n: 0 }, () => called++);
      await nextTurn();
      assert.equal(called, 0, "a line that was not written is not reported written");
      assert.equal(writer.lines, 0);
      const enospc = /cannot write traces file .*t\.jsonl: no space left on the device \(ENOSPC\)/;
      assert.throws(() => writer.append({ n: 1 }), enospc);
      assert.throws(() => writer.close(), enospc);
      assert.equal(writer.closed, true);
    });
  });

  it("a callback that throws: the other lines' callbacks still run, then it is thrown", async () => {
    await inTempDir(async (dir) => {
      const writer = new TracesWriter(join(dir, "t.jsonl"));
      const ran: number[] = [];
      writer.append({ n: 0 }, () => {
        ran.push(0);
        throw new Error("display broke");
      });
      writer.append({ n: 1 }, () => ran.push(1));
      await nextTurn();
      assert.deepEqual(ran, [0, 1]);
      assert.throws(() => writer.append({ n: 2 }), /display broke/);
      assert.throws(() => writer.close(), /display broke/);
      assert.equal(writer.lines, 2, "both lines were written");
    });
  });
});
