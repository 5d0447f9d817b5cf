/**
 * The model relay in a container with no network (`block = ["*"]`): the `command` harness
 * runs programs built on the official `openai` and `@anthropic-ai/sdk` clients (bundled
 * into one file with `bun build`, run by the Bun binary in a test image built here from
 * the busybox test image) and every call, streaming included, reaches the scripted
 * provider through the relay over `docker exec -i`. The container has only its loopback:
 * the host's 127.0.0.1 is not reachable from it, which the test checks first.
 * Skips with one line when no engine can be reached.
 */
import assert from "node:assert/strict";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { MANAGED_LABEL } from "../plugins/runtimes/docker/mod.ts";
import { at } from "./_assert.ts";
import { containersLabelled, dockerSkipReason } from "./_docker.ts";
import { evalInProcess } from "./_eval.ts";
import { type FakeAnthropic, startFakeAnthropic } from "./fakes/anthropic_server.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { buildRelayImage, RELAY_TEST_KEY as KEY, relayRunArgs } from "./_relay_image.ts";

const skip = dockerSkipReason();
if (skip) console.warn(`relay_docker_test: SKIPPED: ${skip}`);

let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let anthropic: FakeAnthropic;
let image: { tag: string; remove(): void };

/** Containers the runtime made that are still there. */
function ourContainers(): string[] {
  return containersLabelled(`${MANAGED_LABEL}=1`);
}

before(async () => {
  if (skip) return;
  openai = await startFakeOpenAI({
    apiKey: KEY,
    script: (b) => (b as { stream?: boolean }).stream ? "streamed: hello world" : "json answer",
  });
  anthropic = await startFakeAnthropic({
    apiKey: KEY,
    script: (b) => ({ text: (b as { stream?: boolean }).stream ? "streamed: hi" : "json hi" }),
  });
  process.env.VF_RELAY_TEST_KEY = KEY;
  image = buildRelayImage();
});

after(async () => {
  await openai?.close();
  await anthropic?.close();
  if (!skip) image.remove();
});

describe("the model relay in a container with no network", { skip: skip ?? false }, () => {
  it("carries the openai SDK's chat calls, JSON and SSE, all recorded", async () => {
    const before = openai.requests.length;
    const { episodes } = await evalInProcess(relayRunArgs("openai", openai.url, image.tag));
    const t = at(at(episodes, 0).traces, 0);
    assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
    assert.equal(t.stop_condition, "agent_completed");
    assert.equal(openai.requests.length - before, 2);
    assert.equal(t.calls.length, 2);
    const output = JSON.stringify(t.info);
    assert.match(output, /streamed=streamed: hello world/);
    assert.equal(output.includes(KEY), false);
    // its container is gone (other runs may have theirs on the same engine)
    assert.ok(t.agent.runtime.id !== null);
    assert.equal(ourContainers().includes(t.agent.runtime.id), false);
  });

  it("carries the @anthropic-ai/sdk's Messages calls, JSON and SSE, all recorded", async () => {
    const before = anthropic.requests.length;
    const { episodes } = await evalInProcess(relayRunArgs("anthropic", anthropic.url, image.tag));
    const t = at(at(episodes, 0).traces, 0);
    assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
    assert.equal(anthropic.requests.length - before, 2);
    assert.equal(t.calls.length, 2);
    const output = JSON.stringify(t.info);
    assert.match(output, /anthropic=json hi/);
    assert.match(output, /anthropic-streamed=streamed: hi/);
  });
});
