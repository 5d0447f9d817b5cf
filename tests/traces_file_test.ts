import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readLines, TracesWriter } from "../lib/run/traces_file.ts";

const openDescriptors = () => readdirSync("/proc/self/fd").length;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
});
