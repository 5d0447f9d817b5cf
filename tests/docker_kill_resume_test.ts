/**
 * `kill -9` of a `vf eval` on the docker runtime with 20 containers starting and running:
 * `vf sandboxes gc` removes every container the run made (and no other), and `--resume`
 * runs exactly the owed episodes. Thirty tasks: ten finish at once, twenty wait in their
 * containers on a server of this test (a plain socket to the host's loopback, the
 * container being on the host's network) until it answers "go", which it does only for the
 * resume. Skips with one line when no engine can be reached.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, describe, it } from "node:test";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { cliArgv, runCli } from "./_cli.ts";
import {
  containersOfRunsUnder,
  dockerSkipReason,
  removeContainers,
  TEST_IMAGE,
} from "./_docker.ts";

const skip = dockerSkipReason();
if (skip) console.warn(`docker_kill_resume_test: SKIPPED: ${skip}`);

const IN_FLIGHT = 20;
const QUICK = 10;
const scratch: string[] = [];
const savedCache = process.env.VF_CACHE_DIR;

after(() => {
  if (savedCache === undefined) delete process.env.VF_CACHE_DIR;
  else process.env.VF_CACHE_DIR = savedCache;
  for (const d of scratch) {
    if (!skip) removeContainers(containersOfRunsUnder(d));
    rmSync(d, { recursive: true, force: true });
  }
});

describe("kill -9 of a docker run, gc, --resume", { skip: skip ?? false }, () => {
  it("gc removes all 20 containers; --resume runs exactly the 20 owed episodes", {
    timeout: 240_000,
  }, async () => {
    const cwd = mkdtempSync(join(tmpdir(), "vf-docker-kill-"));
    scratch.push(cwd);
    const cache = join(cwd, "cache");
    process.env.VF_CACHE_DIR = cache;
    let answer = "wait";
    let goes = 0;
    const server = createServer((s) => {
      if (answer === "go") goes++;
      s.end(`${answer}\n`);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as { port: number }).port;
    try {
      const rows = Array.from({ length: QUICK + IN_FLIGHT }, (_, i) => ({
        prompt: i < QUICK ? `quick ${i}` : `waits ${i}`,
        answer: "x",
      }));
      writeFileSync(join(cwd, "tasks.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n"));
      const ask = `exec 3<>/dev/tcp/127.0.0.1/${port} && read -r said <&3 && [ "$said" = go ]`;
      const program = `case "$VF_PROMPT" in quick*) exit 0;; esac; ` +
        `until (${ask}) 2>/dev/null; do sleep 0.2; done`;
      writeFileSync(
        join(cwd, "kill.toml"),
        [
          `max_concurrent = ${IN_FLIGHT}`,
          '[env.taskset]\nid = "jsonl"\npath = "tasks.jsonl"',
          `[env.agent.harness]\nid = "command"\ncommand = ["bash", "-c", ${
            JSON.stringify(program)
          }]`,
          `[env.agent.runtime]\ntype = "docker"\nimage = "${TEST_IMAGE}"`,
        ].join("\n"),
      );
      const [cmd, ...args] = cliArgv([
        "eval",
        "@",
        "kill.toml",
        "-m",
        "oracle",
        "--display",
        "none",
      ]);
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
      const runDir = () => {
        const runs = existsSync(join(cwd, "outputs")) ? readdirSync(join(cwd, "outputs")) : [];
        return runs.length ? join(cwd, "outputs", runs[0]!) : null;
      };
      const lines = () => {
        const dir = runDir();
        const file = dir && join(dir, "traces.jsonl");
        return file && existsSync(file)
          ? readFileSync(file, "utf8").split("\n").filter(Boolean)
          : [];
      };
      let atKill: { pending: number; made: number } = { pending: 0, made: 0 };
      try {
        const deadline = Date.now() + 120_000;
        while (lines().length < QUICK || listSandboxes().length < IN_FLIGHT) {
          if (child.exitCode !== null) assert.fail(`vf eval ended before the kill:\n${stderr}`);
          if (Date.now() > deadline) {
            assert.fail(`${lines().length} done, ${listSandboxes().length} journaled:\n${stderr}`);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
        const entries = listSandboxes();
        atKill = {
          pending: entries.filter((e) => e.state === "pending").length,
          made: entries.length,
        };
        child.kill("SIGKILL");
        assert.equal(await exited, "SIGKILL");
      } finally {
        if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      }
      const kept = lines();
      assert.equal(kept.length, QUICK, "only the quick episodes were done");
      assert.equal(atKill.made, IN_FLIGHT, JSON.stringify(atKill));
      // a `docker run` the killed run had sent finishes on its own: let it land (slowly, on a
      // loaded engine)
      const dir = runDir()!;
      for (const until = Date.now() + 30_000; Date.now() < until;) {
        if (containersOfRunsUnder(dir).length >= IN_FLIGHT) break;
        await new Promise((r) => setTimeout(r, 250));
      }
      assert.equal(
        containersOfRunsUnder(dir).length,
        IN_FLIGHT,
        `containers left (${atKill.pending} were starting)`,
      );

      const gc = await runCli(["sandboxes", "gc"], { env: { VF_CACHE_DIR: cache } });
      assert.equal(gc.code, 0, gc.stderr);
      assert.equal(gc.stdout.match(/^stopped docker /gm)?.length, IN_FLIGHT, gc.stdout);
      assert.deepEqual(containersOfRunsUnder(dir), [], "no container of the run is left");
      assert.deepEqual(listSandboxes(), [], "the ledger is empty");

      answer = "go";
      const resumed = await runCli(["eval", "--resume", dir, "--display", "none"], {
        cwd,
        env: { VF_CACHE_DIR: cache },
        timeoutMs: 180_000,
      });
      assert.equal(resumed.code, 0, resumed.stderr);
      assert.equal(goes, IN_FLIGHT, "each owed episode ran once, the done ones not again");
      const all = lines();
      assert.equal(all.length, QUICK + IN_FLIGHT);
      for (const line of kept) assert.ok(all.includes(line), "a done episode is kept as it was");
      const prompts = all.map((l) => JSON.parse(l).task.data.prompt as string);
      assert.equal(new Set(prompts).size, QUICK + IN_FLIGHT);
      assert.ok(all.every((l) => JSON.parse(l).ok !== false), "every episode completed");
      assert.deepEqual(containersOfRunsUnder(dir), [], "the resume left no container");
      assert.deepEqual(listSandboxes(), []);
    } finally {
      server.close();
    }
  });
});
