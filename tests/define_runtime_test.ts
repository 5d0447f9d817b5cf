import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineRuntime, type RuntimeConfig } from "../kit/contract.ts";
import { ConfigError } from "../kit/errors.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import local from "../plugins/runtimes/local/mod.ts";

/** A runtime plugin whose schema counts its parses and whose create records its configs. */
function countingRuntime() {
  const seen: RuntimeConfig[] = [];
  let parses = 0;
  const config = z.object({ size: z.number().default(1), labels: z.array(z.string()).default([]) })
    .superRefine(() => {
      parses++;
    });
  const plugin = defineRuntime({
    id: "counting",
    description: "counts",
    isLocal: true,
    config,
    create(c, options): Runtime {
      seen.push(c);
      return local.create({}, options);
    },
  });
  return { plugin, seen, parses: () => parses };
}

describe("defineRuntime()", () => {
  it("validates a settings object once for all the instances made from it, each given its own config", () => {
    const { plugin, seen, parses } = countingRuntime();
    const settings = { size: 3 };
    for (let i = 0; i < 5; i++) plugin.create(settings, { name: `r${i}` });
    assert.equal(parses(), 1);
    assert.equal(seen.length, 5);
    for (const c of seen) assert.deepEqual(c, { size: 3, labels: [], type: "counting" });
    assert.notEqual(seen[0], seen[1]);
    plugin.create({ size: 3 }, { name: "other" }); // another object is validated again
    assert.equal(parses(), 2);
    assert.equal(seen.at(-1)?.size, 3);
  });

  it("throws the same ConfigError for bad settings every time they are used", () => {
    const { plugin, seen } = countingRuntime();
    const bad = { size: "big" };
    const messages: string[] = [];
    for (let i = 0; i < 3; i++) {
      assert.throws(() => plugin.create(bad, { name: "x" }), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        messages.push(e.message);
        return /runtime "counting": size/.test(e.message);
      });
    }
    assert.equal(new Set(messages).size, 1);
    assert.equal(seen.length, 0);
  });
});
