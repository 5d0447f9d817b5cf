import { describe, it } from "node:test";
import assert from "node:assert/strict";
import process from "node:process";
import { collectGarbage } from "../kit/_runtime/gc.ts";

/** Weak references to `count` objects that nothing else holds. */
function unheldObjects(count: number): WeakRef<object>[] {
  return Array.from(
    { length: count },
    (_, index) => new WeakRef({ index, text: `unheld ${index}` }),
  );
}

describe("collectGarbage (kit/_runtime/gc.ts)", () => {
  it("offers a collection exactly where the engine lets code collect", () => {
    const offered = "bun" in process.versions ||
      typeof (globalThis as { gc?: unknown }).gc === "function";
    assert.equal(collectGarbage(), offered);
  });

  it("reclaims what nothing holds, when it offers a collection", async () => {
    if (!collectGarbage()) return; // Deno without --expose-gc: nothing to check
    const refs = unheldObjects(100);
    // a weak reference keeps its object until the end of the job that made or read it
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(collectGarbage(), true);
    const kept = refs.filter((ref) => ref.deref() !== undefined).length;
    // (JavaScriptCore scans the stack conservatively: a stale word may hold one or two)
    assert.ok(kept <= 5, `${kept} of 100 objects nothing holds outlived a full collection`);
  });
});
