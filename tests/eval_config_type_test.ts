import "./_builtins.ts";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { z } from "zod";
import { type EvalConfig, evalConfigSchema } from "../lib/config/eval_config.ts";

/** What the schema outputs, as zod infers it. */
type Inferred = z.infer<ReturnType<typeof evalConfigSchema>>;

// Both directions: a field missing, added or typed differently on either side fails `deno check`.
const toInferred = (c: EvalConfig): Inferred => c;
const fromInferred = (c: Inferred): EvalConfig => c;

describe("EvalConfig type", () => {
  it("is the type of what the schema outputs (checked by the type checker)", () => {
    const parsed = evalConfigSchema().parse({});
    const round = toInferred(fromInferred(parsed));
    assert.equal(round.num_rollouts, 1);
    assert.deepEqual(Object.keys(round).sort(), Object.keys(parsed).sort());
  });
});
