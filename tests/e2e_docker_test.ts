/**
 * The docker runtime in whole runs against the real engine: the quickstart solved by the
 * oracle in containers, none left afterwards; a task's image and memory limit reaching its
 * container (`kill -9`, gc and resume: docker_kill_resume_test.ts).
 * Skips with one line when no engine can be reached.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { runCli } from "./_cli.ts";
import {
  buildImage,
  containersOfRunsUnder,
  dockerSkipReason,
  removeContainers,
  removeImage,
  TEST_IMAGE,
} from "./_docker.ts";

const skip = dockerSkipReason();
if (skip) console.warn(`e2e_docker_test: SKIPPED: ${skip}`);

const scratch: string[] = [];
const savedCache = process.env.VF_CACHE_DIR;

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  scratch.push(dir);
  return dir;
}

after(() => {
  if (savedCache === undefined) delete process.env.VF_CACHE_DIR;
  else process.env.VF_CACHE_DIR = savedCache;
  for (const d of scratch) {
    if (!skip) removeContainers(containersOfRunsUnder(d));
    rmSync(d, { recursive: true, force: true });
  }
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
});
