/**
 * docs/performance.md is where benchmark figures live: every benchmark in bench/ (a script no
 * other bench file imports or starts) is named there with its command, so no benchmark runs
 * without a documented method, and no figure is left in a source comment instead.
 *
 * @module
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dirname!, "..");
const BENCH = join(ROOT, "bench");

describe("docs/performance.md", () => {
  it("names every benchmark script of bench/", () => {
    const files = readdirSync(BENCH).filter((f) => f.endsWith(".ts"));
    const sources = new Map(files.map((f) => [f, readFileSync(join(BENCH, f), "utf8")]));
    // a file another bench file mentions by name (an import, a child script) is a helper;
    // run_all.ts names every benchmark to run them in turn, so it does not count
    const mentions = [...sources].filter(([g]) => g !== "run_all.ts");
    const helpers = new Set(
      files.filter((f) => mentions.some(([g, text]) => g !== f && text.includes(`${f}"`))),
    );
    const benchmarks = files.filter((f) => !helpers.has(f));
    assert.ok(benchmarks.length >= 10, `only ${benchmarks.length} benchmarks found`);
    const doc = readFileSync(join(ROOT, "docs", "performance.md"), "utf8");
    const missing = benchmarks.filter((f) => !doc.includes(`bench/${f}`));
    assert.deepEqual(missing, [], "benchmarks docs/performance.md does not name");
  });
});
