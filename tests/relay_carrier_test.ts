/**
 * The model relay in a container of the busybox test image (no JavaScript runtime, no C
 * library) with no network: the relay runs on this host's own runtime, copied in once per
 * container with its loader and libraries (kit/relay/carrier.ts). The `command` harness
 * runs a busybox shell program whose `wget` makes chat calls, JSON then SSE, through it;
 * the host's 127.0.0.1 is not reachable from the container, which the program checks
 * first. A second relay in the same container finds the carrier there, and a closed relay
 * leaves no process in the container nor on this host.
 * Skips with one line when no engine can be reached.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { openRelay } from "../kit/relay/host.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import docker, { MANAGED_LABEL, RUN_LABEL } from "../plugins/runtimes/docker/mod.ts";
import { at } from "./_assert.ts";
import { containersLabelled, dockerSkipReason, removeContainers, TEST_IMAGE } from "./_docker.ts";
import { evalInProcess } from "./_eval.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { RELAY_TEST_KEY as KEY, SHELL_AGENT } from "./_relay_image.ts";

const skip = dockerSkipReason();
if (skip) console.warn(`relay_carrier_test: SKIPPED: ${skip}`);

const RUN = `relay-carrier-${process.pid}`;
let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;

/** Processes of this host whose parent is this process and whose command line has `word`. */
function childrenWith(word: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
      if (ppid === process.pid && cmd.includes(word)) found.push(cmd);
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
});

after(async () => {
  await openai?.close();
  if (!skip) removeContainers(containersLabelled(`${RUN_LABEL}=${RUN}`));
});

describe("the model relay in a busybox container", { skip: skip ?? false }, () => {
  it("carries a shell program's chat calls, JSON and SSE, all recorded", async () => {
    const before = openai.requests.length;
    const { episodes } = await evalInProcess([
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
      "docker",
      "--env.agent.runtime.image",
      TEST_IMAGE,
      "--env.agent.runtime.block",
      '["*"]',
    ]);
    const t = at(at(episodes, 0).traces, 0);
    assert.deepEqual(t.errors, [], JSON.stringify(t.errors));
    assert.equal(t.stop_condition, "agent_completed");
    assert.equal(openai.requests.length - before, 2);
    assert.equal(t.calls.length, 2);
    const output = JSON.stringify(t.info);
    assert.match(output, /json=\{.*json answer/);
    assert.match(output, /hello/);
    assert.equal(output.includes(KEY), false);
    assert.ok(t.agent.runtime.id !== null);
    assert.equal(containersLabelled(`${MANAGED_LABEL}=1`).includes(t.agent.runtime.id), false);
    assert.deepEqual(childrenWith("vf-relay"), [], "no relay session is left on this host");
  });

  it("installs the carrier once per container and leaves no process when closed", async () => {
    const rt: Runtime = docker.create(
      { image: TEST_IMAGE, workdir: "/work", block: ["*"] },
      { name: "carrier", run: RUN },
    );
    await rt.start();
    try {
      let writes = 0;
      const write = rt.write.bind(rt);
      rt.write = (path, data) => (writes++, write(path, data));
      const first = await openRelay(rt, openai.url);
      const installed = writes;
      assert.ok(installed >= 2, `the runtime and its libraries (${installed} files)`);
      const second = await openRelay(rt, openai.url);
      assert.equal(writes, installed, "the second relay found the carrier");
      const said = await rt.run([
        "wget",
        "-q",
        "-O",
        "-",
        "--header",
        `Authorization: Bearer ${KEY}`,
        "--header",
        "Content-Type: application/json",
        `${second.endpoint}/chat/completions`,
        "--post-data",
        JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
      ]);
      assert.match(said.stdout, /json answer/, said.stderr);
      const open = await rt.run(["ps", "-o", "args"]);
      assert.equal(open.stdout.split("\n").filter((l) => l.includes("ld-linux")).length, 2);
      assert.equal(childrenWith("vf-relay").length, 2);
      await first.close();
      await second.close();
      await first.ended;
      await second.ended;
      const ps = await rt.run(["ps", "-o", "pid,args"]);
      assert.doesNotMatch(ps.stdout, /runtime|ld-linux/, ps.stdout);
      assert.deepEqual(childrenWith("vf-relay"), []);
    } finally {
      await rt.stop();
    }
  });
});
