/**
 * Every dialect the interception server serves (lib/dialects/mod.ts) passes the dialect
 * conformance suite with its hand-written samples; a dialect in the map without samples
 * fails here.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { DIALECTS } from "../lib/dialects/mod.ts";
import { dialectConformance, type DialectSamples } from "./conformance/dialect_conformance.ts";
import { anthropicSamples } from "./conformance/dialect_samples/anthropic.ts";
import { chatSamples } from "./conformance/dialect_samples/chat.ts";
import { responsesSamples } from "./conformance/dialect_samples/responses.ts";

/** Samples by dialect id: one line per dialect. */
const SAMPLES: Record<string, DialectSamples> = {
  chat: chatSamples,
  responses: responsesSamples,
  anthropic: anthropicSamples,
};

describe("dialect conformance: the map", () => {
  it("has samples for every dialect served", () => {
    assert.deepEqual(Object.keys(DIALECTS).filter((id) => !(id in SAMPLES)), []);
  });
});

for (const [id, dialect] of Object.entries(DIALECTS)) {
  const samples = SAMPLES[id];
  if (samples) dialectConformance(id, dialect, samples);
}
