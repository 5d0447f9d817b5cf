import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AGENT_OUTPUT_TAIL_CHARS, agentOutput } from "../lib/rollout/agent_output.ts";
import { addHostSecrets, clearSecretsForTests } from "../kit/secrets.ts";
import { runCli } from "./_cli.ts";
import { FAST, tmp } from "./_run.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";
import type { Episode } from "../kit/trace/types.ts";
import { at } from "./_assert.ts";

describe("agentOutput()", () => {
  it("keeps the last characters of each stream, marks the cut, masks secrets before cutting", () => {
    const secret = "vf-session-key-0123456789";
    const long = "x".repeat(AGENT_OUTPUT_TAIL_CHARS) + `end ${secret}`;
    const out = agentOutput({ exitCode: 3, stdout: long, stderr: "short" }, [secret]);
    assert.equal(out.exit_code, 3);
    assert.equal(out.stdout.length, AGENT_OUTPUT_TAIL_CHARS + 1);
    assert.ok(out.stdout.startsWith("…") && out.stdout.endsWith("end ***"));
    assert.equal(out.stderr, "short");
  });

  it("masks every registered secret (host credentials, client key) as well", () => {
    addHostSecrets({ GITHUB_TOKEN: "ghp_abcdefghijklmnop", SSH_KEY_PATH: "/home/me/.ssh/id" });
    try {
      const out = agentOutput({
        exitCode: 0,
        stdout: "t=ghp_abcdefghijklmnop",
        stderr: "path /home/me/.ssh/id",
      }, []);
      assert.equal(out.stdout, "t=***");
      assert.equal(out.stderr, "path /home/me/.ssh/id");
    } finally {
      clearSecretsForTests();
    }
  });
});

describe("the agent program's output on the trace", () => {
  let fake: FakeOpenAI;
  let dir: string;
  before(async () => {
    fake = await startFakeOpenAI();
    dir = tmp("vf-agent-out-");
  });
  after(async () => {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs one task through the command harness with a shell line as the agent. */
  async function runAgent(name: string, line: string): Promise<Episode> {
    const r = await runCli([
      "eval",
      FAST,
      "--env.taskset.count",
      "1",
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(["sh", "-c", line]),
      "-m",
      "m",
      "--client.base-url",
      fake.url,
      "--client.api-key-var",
      "VF_AGENT_OUT_KEY",
      "--run.name",
      name,
      "--display",
      "none",
      "-o",
      dir,
    ], { cwd: dir, env: { VF_AGENT_OUT_KEY: "unused-key" } });
    assert.ok(r.code === 0 || r.code === 3, r.stderr);
    return JSON.parse(at(readFileSync(join(dir, name, "traces.jsonl"), "utf8").split("\n"), 0));
  }

  it("is kept when the program exits 0, with its key masked", async () => {
    const ep = await runAgent(
      "ok",
      'echo "hello from the agent"; echo "my key is $OPENAI_API_KEY"; echo "a warning" >&2',
    );
    const t = at(ep.traces, 0);
    assert.equal(t.ok, true, JSON.stringify(t.errors));
    assert.deepEqual(t.info.agent_output, {
      exit_code: 0,
      stdout: "hello from the agent\nmy key is ***\n",
      stderr: "a warning\n",
    });
  });

  it("is kept when the program fails, next to the HarnessError", async () => {
    const ep = await runAgent(
      "failed",
      'echo "step 1 done"; echo "cannot parse reply" >&2; exit 4',
    );
    const t = at(ep.traces, 0);
    assert.equal(t.ok, false);
    assert.match(at(t.errors, 0).message, /exited 4: cannot parse reply/);
    assert.deepEqual(t.info.agent_output, {
      exit_code: 4,
      stdout: "step 1 done\n",
      stderr: "cannot parse reply\n",
    });
    assert.deepEqual(readdirSync(dir).sort(), ["failed", "ok"]);
  });
});
