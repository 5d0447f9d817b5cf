import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { collectGarbage } from "../kit/_runtime/gc.ts";
import { execPath } from "../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { runProcess } from "./_cli.ts";

const ROOT = join(import.meta.dirname!, "..");
const RECLAIM = join(ROOT, "tests", "fixtures", "gc", "reclaim.ts");

/** The `--v8-flags=...` of the `vf` deno task (deno.json), which the launchers share. */
function vfTaskV8Flags(): string {
  const tasks = JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")).tasks as {
    vf: string;
  };
  const flag = tasks.vf.split(/\s+/).find((word) => word.startsWith("--v8-flags="));
  assert.ok(flag, `deno task vf passes no --v8-flags: ${tasks.vf}`);
  return flag;
}

describe("collectGarbage (kit/_runtime/gc.ts)", () => {
  it("offers a collection exactly where the engine lets code collect", () => {
    const offered = "bun" in process.versions ||
      typeof (globalThis as { gc?: unknown }).gc === "function";
    assert.equal(collectGarbage(), offered);
  });

  it("reclaims what nothing holds, started as the vf launchers start the engine", async () => {
    const args = runtimeName() === "deno" ? ["run", "-A", vfTaskV8Flags(), RECLAIM] : [RECLAIM];
    const r = await runProcess(execPath(), args, { timeoutMs: 30_000 });
    assert.equal(r.code, 0, r.stderr);
    const { offered, kept, of } = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as {
      offered: boolean;
      kept: number;
      of: number;
    };
    assert.equal(offered, true);
    assert.equal(of, 100);
    // (JavaScriptCore scans the stack conservatively: a stale word may hold one or two)
    assert.ok(kept <= 5, `${kept} of ${of} objects nothing holds outlived a full collection`);
  });
});
