import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tempPathBeside, writeFileAtomic } from "../kit/util/write_atomic.ts";

function withDir(fn: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "vf-write-atomic-"));
  try {
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("writeFileAtomic", () => {
  it("creates missing folders, replaces the old bytes and leaves no temporary file", () => {
    withDir((dir) => {
      const path = join(dir, "a", "b", "file.json");
      writeFileAtomic(path, "old");
      writeFileAtomic(path, new TextEncoder().encode("new"));
      assert.equal(readFileSync(path, "utf8"), "new");
      assert.deepEqual(readdirSync(join(dir, "a", "b")), ["file.json"]);
    });
  });

  it("leaves what was there and removes its temporary file when the rename fails", () => {
    withDir((dir) => {
      const path = join(dir, "target");
      mkdirSync(path); // a folder where the file should go: the rename fails
      assert.throws(() => writeFileAtomic(path, "x"), { code: /EISDIR|ENOTEMPTY|EEXIST|EPERM/ });
      assert.deepEqual(readdirSync(dir), ["target"]);
    });
  });

  it("names temporary files no other write picks", () => {
    const names = new Set(Array.from({ length: 1000 }, () => tempPathBeside("/x/f")));
    assert.equal(names.size, 1000);
    for (const name of names) assert.match(name, /^\/x\/f\.tmp-\d+-\d+-\d+$/);
  });
});
