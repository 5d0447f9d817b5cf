/**
 * scripts/test.sh reports each suite's counts through scripts/test_counts.sh: the same test
 * file run by Deno and by Bun must give the same passed, failed and skipped counts, each it()
 * once (Deno's own summary counts describe blocks, and nested ones as steps).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";

const ROOT = join(import.meta.dirname!, "..");
const BIN = join(ROOT, "node_modules", ".bin");
const SHAPES = join(ROOT, "tests", "fixtures", "counts", "shapes.ts");
const dir = mkdtempSync(join(tmpdir(), "vf-test-counts-"));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The log of one runner on the fixture (it fails: one of its tests does). */
function logOf(runner: "deno" | "bun"): string {
  const args = runner === "deno"
    ? ["test", "-A", "--no-check", SHAPES]
    : ["test", "--timeout", "60000", SHAPES];
  const r = spawnSync(join(BIN, runner), args, {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(r.status, 1, `${runner} exits 1 for the failing case: ${r.stderr}`);
  const log = join(dir, `${runner}.log`);
  writeFileSync(log, r.stdout + r.stderr);
  return log;
}

/** `fn` of scripts/test_counts.sh on `log`. */
function counts(fn: string, log: string): string {
  const r = spawnSync("bash", ["-c", `source scripts/test_counts.sh && ${fn} "$1"`, "_", log], {
    cwd: ROOT,
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe("suite counts (scripts/test_counts.sh)", () => {
  it("count each it() once, the same on Deno and on Bun", () => {
    const deno = counts("deno_counts", logOf("deno"));
    const bun = counts("bun_counts", logOf("bun"));
    assert.equal(deno, "4 1 2", "deno: passed a, b, d, g; failed c; skipped e, f");
    assert.equal(bun, deno);
  });

  it("name the skipped tests", () => {
    assert.deepEqual(counts("bun_skipped", logOf("bun")).split("\n"), ["outer > e", "outer > f"]);
  });

  it("no test decides a skip while it runs (Deno counts a t.skip() as a pass)", () => {
    const tests = join(ROOT, "tests");
    const files = readdirSync(tests, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts") && f !== "test_counts_test.ts");
    assert.ok(files.length > 50, `the test files were found: ${files.length}`);
    const skipping = files.filter((f) => /\bt\.skip\(/.test(readFileSync(join(tests, f), "utf8")));
    assert.deepEqual(skipping, [], "declare the skip instead: it(name, { skip: reason }, fn)");
  });
});
