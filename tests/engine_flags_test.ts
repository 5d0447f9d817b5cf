/**
 * Every way `vf` runs under Deno from this repository (the `vf`, `demo` and `compile` deno
 * tasks, `npm run demo`, and `bin/vf.js`, which `npx vf` runs) starts V8 with the same flags, and the README
 * and docs/scripting.md tell `deno run` users those: `--expose-gc`,
 * without which the run's heap trim (lib/run/heap_trim.ts) cannot collect, and the young
 * generation's cap the memory figures were measured with (docs/performance.md).
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HEAP_UNCOLLECTABLE } from "../lib/run/run_eval.ts";

const ROOT = join(import.meta.dirname!, "..");
const tasks: Record<string, string> = JSON.parse(
  readFileSync(join(ROOT, "deno.json"), "utf8"),
).tasks;

/** The `--v8-flags=` values in a command line or source text. */
function v8Flags(text: string): string[] {
  return [...text.matchAll(/--v8-flags=([^\s"']+)/g)].map((m) => m[1]!);
}

describe("engine flags", () => {
  const expected = v8Flags(tasks.vf ?? "");

  it("the vf deno task lets code collect and caps the young generation", () => {
    assert.equal(expected.length, 1, `deno task vf: ${tasks.vf}`);
    const flags = expected[0]!.split(",");
    assert.ok(flags.includes("--expose-gc"), flags.join(","));
    assert.ok(flags.some((f) => /^--max-semi-space-size=\d+$/.test(f)), flags.join(","));
  });

  for (const name of ["demo", "compile"]) {
    it(`the ${name} deno task passes the same flags`, () => {
      assert.deepEqual(v8Flags(tasks[name] ?? ""), expected, `deno task ${name}: ${tasks[name]}`);
    });
  }

  it("npm run demo passes the same flags", () => {
    const scripts = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts;
    assert.deepEqual(v8Flags(scripts.demo ?? ""), expected, `npm run demo: ${scripts.demo}`);
  });

  it("bin/vf.js passes the same flags", () => {
    assert.deepEqual(v8Flags(readFileSync(join(ROOT, "bin", "vf.js"), "utf8")), expected);
  });

  it("a run that cannot collect its heap names the same flags", () => {
    assert.deepEqual(v8Flags(HEAP_UNCOLLECTABLE), expected);
  });

  for (const doc of ["README.md", join("docs", "running.md"), join("docs", "scripting.md")]) {
    it(`${doc} tells deno run users the same flags`, () => {
      const text = readFileSync(join(ROOT, doc), "utf8").replaceAll("`", " ");
      const told = v8Flags(text);
      assert.ok(told.length > 0, `${doc} names no --v8-flags`);
      for (const flags of told) assert.equal(flags, expected[0]);
    });
  }
});
