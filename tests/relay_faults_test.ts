/**
 * Faults of the model relay in a container with no network: the relay killed mid-stream,
 * its command session (the host's `docker exec`) dropped, the container removed under a
 * call. Each fails the rollout with a typed error that the episode records, within
 * seconds, and leaves no container and no relay process on either side.
 * Skips with one line when no engine can be reached.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { MANAGED_LABEL } from "../plugins/runtimes/docker/mod.ts";
import { descendants } from "../kit/_runtime/process_tree.ts";
import { at } from "./_assert.ts";
import { containersLabelled, dockerSkipReason } from "./_docker.ts";
import { evalInProcess } from "./_eval.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { buildRelayImage, RELAY_TEST_KEY, relayRunArgs } from "./_relay_image.ts";

const skip = dockerSkipReason();
if (skip) console.warn(`relay_faults_test: SKIPPED: ${skip}`);

let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
let image: { tag: string; remove(): void };
/** What the test does to the relay once the program's stream has begun. */
let fault: (container: string) => void = () => {};
const release: (() => void)[] = [];

/** Processes among `pids` whose command line names the relay's script. */
function relayProcesses(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("vf-relay-");
    } catch {
      return false; // exited meanwhile
    }
  });
}

/**
 * This test process's own `docker exec` sessions of the relay (its descendants only: the
 * other suite, run at the same time, has relays of its own).
 */
function hostRelaySessions(): number[] {
  return relayProcesses(descendants(process.pid));
}

/** The relay inside container `id`, seen from the host: the processes in its cgroup. */
function containerRelays(id: string): number[] {
  const inside = readdirSync("/proc").filter((name) => {
    if (!/^\d+$/.test(name)) return false;
    try {
      return readFileSync(`/proc/${name}/cgroup`, "utf8").includes(id);
    } catch {
      return false; // exited meanwhile
    }
  });
  return relayProcesses(inside.map(Number));
}

/** The container whose relay session is open: the id in that `docker exec`'s arguments. */
function relayContainer(): string {
  for (const pid of hostRelaySessions()) {
    const args = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    const id = args.find((a) => /^[0-9a-f]{64}$/.test(a));
    if (id !== undefined) return id;
  }
  throw new Error("no relay session is open");
}

before(async () => {
  if (skip) return;
  openai = await startFakeOpenAI({
    apiKey: RELAY_TEST_KEY,
    script: (b) => {
      if (!(b as { stream?: boolean }).stream) return "json answer";
      const container = relayContainer();
      // the first delta reaches the program, then the fault strikes while the rest waits
      setTimeout(() => fault(container), 300);
      return {
        content: "streamed: never finished",
        pauseAfterFirstChunk: new Promise<void>((resolve) => release.push(resolve)),
      };
    },
  });
  process.env.VF_RELAY_TEST_KEY = RELAY_TEST_KEY;
  image = buildRelayImage();
});

after(async () => {
  for (const r of release) r();
  await openai?.close();
  if (!skip) image.remove();
});

const faults: [string, (container: string) => void][] = [
  ["the relay killed mid-stream", (c) => {
    for (const pid of containerRelays(c)) process.kill(pid, "SIGKILL");
  }],
  ["the relay's command session dropped", () => {
    for (const pid of hostRelaySessions()) process.kill(pid, "SIGKILL");
  }],
  ["the container removed under a call", (c) => {
    execFileSync("docker", ["rm", "--force", c], { stdio: "ignore" });
  }],
];

describe("faults of the model relay", { skip: skip ?? false }, () => {
  for (const [name, act] of faults) {
    it(`${name}: the rollout fails with a typed error, nothing is left`, async () => {
      fault = act;
      const started = Date.now();
      const { episodes } = await evalInProcess(relayRunArgs("openai", openai.url, image.tag));
      const t = at(at(episodes, 0).traces, 0);
      assert.ok(Date.now() - started < 60_000, "the rollout took too long");
      // the rollout fails, and the streamed call it was in records the cut as the dialect's
      // error (a 502 the program's SDK would see on a direct connection)
      // (which is seen first, the cut call or the relay's end, is a race: either fails it)
      assert.ok(t.errors.length > 0, "the fault was not recorded");
      for (const e of t.errors) {
        assert.ok(
          e.type === "ProviderError" ||
            (e.type === "SandboxError" && /model relay in the sandbox ended/.test(e.message)),
          JSON.stringify(t.errors),
        );
      }
      assert.equal(t.calls.length, 2);
      assert.equal(at(t.calls, 0).error ?? null, null);
      assert.equal(at(t.calls, 1).error?.type, "ProviderError");
      assert.equal(at(t.calls, 1).error?.status_code, 502);
      // its container is gone (other runs may have theirs on the same engine)
      const id = t.agent.runtime.id;
      assert.ok(id !== null);
      assert.equal(containersLabelled(`${MANAGED_LABEL}=1`).includes(id), false);
      assert.deepEqual(hostRelaySessions(), []);
    });
  }
});
