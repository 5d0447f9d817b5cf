/**
 * The model relay on a remote runtime: the Modal fake runs each sandbox's commands in a
 * network namespace of the sandbox's own (tests/fakes/sandbox_netns.ts), so its programs
 * cannot reach this host's 127.0.0.1, as in a real sandbox. The `command` harness runs a
 * shell program whose `wget` makes a JSON and a streamed chat call; both reach the
 * scripted provider through the relay, a live program over the task command router, and
 * are recorded; nothing is left running. Skips with one line where the fake cannot make
 * namespaces (not root).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { closeModalConnections } from "../plugins/runtimes/modal/mod.ts";
import { at } from "./_assert.ts";
import { evalInProcess } from "./_eval.ts";
import { setupModalEnv } from "./fakes/modal_env.ts";
import type { ModalTestEnv } from "./fakes/modal_env.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { isolatedNetworks } from "./fakes/sandbox_netns.ts";
import { RELAY_TEST_KEY as KEY, SHELL_AGENT } from "./_relay_image.ts";

const skip = isolatedNetworks() ? null : "fake sandboxes get no network of their own here";
if (skip) console.warn(`relay_remote_test: SKIPPED: ${skip}`);

let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let modal: ModalTestEnv;

/** Processes of this host whose command line names the relay. */
function relayProcesses(): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (cmd.includes("vf-relay-in-sandbox")) found.push(cmd.replaceAll("\0", " "));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

before(async () => {
  if (skip) return;
  openai = await startFakeOpenAI({
    apiKey: KEY,
    script: (b) => (b as { stream?: boolean }).stream ? "streamed: hello world" : "json answer",
  });
  process.env.VF_RELAY_TEST_KEY = KEY;
  modal = await setupModalEnv();
});

after(async () => {
  closeModalConnections();
  await modal?.dispose();
  await openai?.close();
});

/** `vf eval` of the shell program on `runtime`. */
function args(runtime: string): string[] {
  return [
    "addition",
    "-n",
    "1",
    "-m",
    "m-relay",
    "--client.base-url",
    openai.url,
    "--client.api-key-var",
    "VF_RELAY_TEST_KEY",
    "--env.agent.harness.id",
    "command",
    "--env.agent.harness.command",
    JSON.stringify(["sh", "-c", SHELL_AGENT]),
    "--env.agent.harness.env",
    JSON.stringify({ VF_HOST_PROBE: openai.url }),
    "--env.agent.runtime.type",
    runtime,
  ];
}

describe("the model relay on a remote runtime", { skip: skip ?? false }, () => {
  it("carries a program's chat calls on the Modal fake, JSON and SSE, all recorded", async () => {
    const before = openai.requests.length;
    const { episodes } = await evalInProcess(args("modal"));
    const t = at(at(episodes, 0).traces, 0);
    assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
    assert.equal(t.stop_condition, "agent_completed");
    assert.equal(openai.requests.length - before, 2);
    assert.equal(t.calls.length, 2);
    const output = JSON.stringify(t.info);
    assert.match(output, /json=\{.*json answer/);
    assert.match(output, /hello/);
    assert.doesNotMatch(output, /host reached/);
    assert.equal(modal.fake.liveSandboxes(), 0);
    assert.deepEqual(relayProcesses(), []);
  });
});
