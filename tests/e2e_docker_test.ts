/**
 * The docker runtime in whole runs against the real engine: the quickstart solved by the
 * oracle in containers, none left afterwards; and `kill -9` of a run whose containers are
 * running, after which `vf sandboxes gc` removes every one it made (and nothing else).
 * Skips with one line when no engine can be reached.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { MANAGED_LABEL } from "../plugins/runtimes/docker/mod.ts";
import { cliArgv, runCli } from "./_cli.ts";
import {
  buildImage,
  containerNames,
  containersLabelled,
  dockerSkipReason,
  removeContainers,
  removeImage,
  TEST_IMAGE,
} from "./_docker.ts";

const skip = dockerSkipReason();
if (skip) console.warn(`e2e_docker_test: SKIPPED: ${skip}`);

const IN_FLIGHT = 8;
const scratch: string[] = [];
const ours = new Set<string>();
const savedCache = process.env.VF_CACHE_DIR;

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

/** Containers with the runtime's label whose names the ledger gave. */
function containersNamed(names: Set<string>): string[] {
  if (names.size === 0) return [];
  return containerNames(containersLabelled(`${MANAGED_LABEL}=1`))
    .filter(([, name]) => names.has(name)).map(([id]) => id);
}

after(() => {
  if (savedCache === undefined) delete process.env.VF_CACHE_DIR;
  else process.env.VF_CACHE_DIR = savedCache;
  if (!skip) removeContainers(containersNamed(ours));
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

describe("docker runtime in whole runs", { skip: skip ?? false }, () => {
  it("the quickstart is solved by the oracle in containers, and none is left", async () => {
    const cwd = tempDir("vf-docker-e2e-");
    const cache = tempDir("vf-docker-e2e-cache-");
    const quickstart = join(import.meta.dirname!, "..", "examples", "quickstart.toml");
    const r = await runCli([
      "eval",
      "@",
      quickstart,
      "--model",
      "oracle",
      "--env.agent.runtime.type",
      "docker",
      "--env.agent.runtime.image",
      TEST_IMAGE,
      "--display",
      "none",
    ], { cwd, env: { VF_CACHE_DIR: cache }, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    const [run] = readdirSync(join(cwd, "outputs"));
    const summary = JSON.parse(readFileSync(join(cwd, "outputs", run!, "summary.json"), "utf8"));
    assert.equal(summary.runtime, "docker");
    assert.deepEqual(
      [summary.counts.episodes, summary.counts.errored_episodes, summary.reward.mean],
      [10, 0, 1],
    );
    assert.deepEqual(summary.unconfirmed_sandboxes, []);
    process.env.VF_CACHE_DIR = cache;
    assert.deepEqual(listSandboxes(), [], "every container confirmed removed");
  });

  it("a task's image and resources.memory reach its container; other tasks keep the run's", async () => {
    const cwd = tempDir("vf-docker-task-");
    const image = `verifiers-ts-test:task-${process.pid}`;
    writeFileSync(join(cwd, "Dockerfile"), `FROM ${TEST_IMAGE}\nRUN echo task-image > /marker\n`);
    buildImage(image, cwd);
    try {
      const rows = [
        { prompt: "in the task's image", answer: "x", image, resources: { memory: 0.125 } },
        { prompt: "in the run's image", answer: "x" },
      ];
      writeFileSync(join(cwd, "tasks.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n"));
      const probe = "cat /marker 2>/dev/null || echo run-image; " +
        "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes";
      writeFileSync(
        join(cwd, "task.toml"),
        [
          '[env.taskset]\nid = "jsonl"\npath = "tasks.jsonl"',
          `[env.agent.harness]\nid = "command"\ncommand = ["sh", "-c", ${JSON.stringify(probe)}]`,
          // host networking: the program reaches the endpoint directly, with no relay (the test
          // image has no JavaScript runtime to run one)
          `[env.agent.runtime]\ntype = "docker"\nimage = "${TEST_IMAGE}"`,
        ].join("\n"),
      );
      const cache = tempDir("vf-docker-task-cache-");
      const r = await runCli(["eval", "@", "task.toml", "-m", "oracle", "--display", "none"], {
        cwd,
        env: { VF_CACHE_DIR: cache },
      });
      assert.equal(r.code, 0, r.stderr);
      const [run] = readdirSync(join(cwd, "outputs"));
      const lines = readFileSync(join(cwd, "outputs", run!, "traces.jsonl"), "utf8").trim()
        .split("\n").map((l) => JSON.parse(l));
      const seen = Object.fromEntries(lines.map((e) => [
        e.task.data.prompt,
        e.traces[0].info.agent_output.stdout.trim().split("\n"),
      ]));
      assert.equal(seen["in the task's image"][0], "task-image");
      assert.equal(seen["in the task's image"][1], String(0.125 * 1024 ** 3));
      assert.equal(seen["in the run's image"][0], "run-image");
      assert.notEqual(seen["in the run's image"][1], String(0.125 * 1024 ** 3));
    } finally {
      removeImage(image);
    }
  });

  it("kill -9 with containers running, then `vf sandboxes gc` removes every one", async () => {
    const cwd = tempDir("vf-docker-kill-");
    const cache = tempDir("vf-docker-kill-cache-");
    process.env.VF_CACHE_DIR = cache;
    const config = join(cwd, "sleepy.toml");
    writeFileSync(
      config,
      [
        "num_rollouts = 1",
        `max_concurrent = ${IN_FLIGHT}`,
        '[env.taskset]\nid = "shell-basics"',
        '[env.agent.harness]\nid = "command"\ncommand = ["sleep", "60"]',
        `[env.agent.runtime]\ntype = "docker"\nimage = "${TEST_IMAGE}"\nblock = ["*"]`,
      ].join("\n"),
    );
    const [cmd, ...args] = cliArgv(["eval", "@", config, "-m", "oracle", "--display", "none"]);
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, VF_CACHE_DIR: cache, NO_COLOR: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr!.setEncoding("utf8").on("data", (d: string) => stderr += d);
    const exited = new Promise<string>((r) =>
      child.on("close", (code, signal) => r(signal ?? `exit ${code}`))
    );
    const created = () => listSandboxes().filter((e) => e.state !== "pending").length;
    try {
      const deadline = Date.now() + 60_000;
      while (created() < IN_FLIGHT) {
        if (child.exitCode !== null) assert.fail(`vf eval ended before the kill:\n${stderr}`);
        if (Date.now() > deadline) assert.fail(`only ${created()} containers made:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      child.kill("SIGKILL");
      assert.equal(await exited, "SIGKILL");
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    // every container the run made or was making has its name in the ledger
    const names = new Set(listSandboxes().map((e) => e.name!).filter(Boolean));
    for (const n of names) ours.add(n);
    assert.ok(names.size >= IN_FLIGHT);
    // a `docker run` the killed run had sent finishes on its own: let it land (slowly, on a
    // loaded engine)
    let running = containersNamed(names);
    for (const until = Date.now() + 30_000; running.length < IN_FLIGHT && Date.now() < until;) {
      await new Promise((r) => setTimeout(r, 250));
      running = containersNamed(names);
    }
    assert.ok(running.length >= IN_FLIGHT, `${running.length} containers running`);

    const gc = await runCli(["sandboxes", "gc"], { env: { VF_CACHE_DIR: cache } });
    assert.equal(gc.code, 0, gc.stderr);
    assert.ok((gc.stdout.match(/^stopped docker /gm)?.length ?? 0) >= running.length, gc.stdout);
    assert.deepEqual(containersNamed(names), [], "no container of the run is left");
    assert.deepEqual(listSandboxes(), [], "the ledger is empty");
  });
});
