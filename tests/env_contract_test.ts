import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadBuiltins, loadPlugin } from "../lib/plugins/load.ts";
import { PluginError } from "../kit/errors.ts";
import { envClassName } from "../kit/env_contract.ts";
import { episodesOf, FAST, run, tmp } from "./_run.ts";

const REPEAT = join(import.meta.dirname!, "fixtures", "envs", "repeat.ts");

/** `vf eval echo` with the oracle and the null harness, plus `extra`. */
function echoArgs(extra: string[]): string[] {
  return ["echo", "-n", "2", "-m", "oracle", "--env.agent.harness.id", "null", ...extra];
}

describe("env plugins", () => {
  it("loadPlugin() finds the built-in single-agent env by id and by Python's spelling", async () => {
    for (const id of ["single-agent", "single_agent", "Single-Agent"]) {
      const env = await loadPlugin("env", id);
      assert.equal(env.kind, "env");
      assert.equal(env.id, "single-agent");
      assert.equal(envClassName(env), "SingleAgentEnv");
    }
    const all = await loadBuiltins();
    assert.ok(all.some((p) => p.kind === "env" && p.id === "single-agent"));
  });

  it("loadPlugin() applies the export rule to env modules", async () => {
    const err = await loadPlugin("env", FAST).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof PluginError);
    assert.equal(err.code, "plugin_wrong_kind");
    assert.match(err.message, /exports no env plugin/);
  });

  it("a run without env.id plays single-agent: one nameless-seat trace per episode", async () => {
    const r = await run(echoArgs([]), tmp());
    const episodes = episodesOf(r.runDir);
    assert.equal(episodes.length, 2);
    for (const ep of episodes) {
      assert.equal(ep.env.id, "echo");
      assert.equal(ep.traces.length, 1);
      assert.equal(ep.traces[0]!.agent.name, "agent");
      assert.equal(ep.ok, true);
    }
  });

  it("an env loaded by path runs its episodes with its own keys and finalize", async () => {
    const cwd = tmp();
    const r = await run(echoArgs(["--env.id", REPEAT, "--env.times", "3"]), cwd);
    const episodes = episodesOf(r.runDir);
    assert.equal(episodes.length, 2);
    for (const ep of episodes) {
      assert.equal(ep.env.id, `${REPEAT}+echo`);
      assert.equal(ep.ok, true, JSON.stringify(ep.errors));
      assert.deepEqual(ep.traces.map((t) => t.metrics.attempt), [0, 1, 2]);
      assert.equal(new Set(ep.traces.map((t) => t.id)).size, 3);
      for (const t of ep.traces) assert.equal(t.task.hash, ep.task.hash);
    }
    const config = JSON.parse(readFileSync(join(r.runDir, "configs", "eval.json"), "utf8"));
    assert.equal(config.env.id, REPEAT);
    assert.equal(config.env.times, 3);
    assert.equal(r.summary.counts.episodes, 2);
    assert.equal(r.summary.counts.traces, 6);
  });

  it("an env's own keys are validated, naming the flag", async () => {
    const err = await run(echoArgs(["--env.id", REPEAT, "--env.times", "0"]), tmp()).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(err instanceof Error);
    assert.match(err.message, /--env\.times/);
  });

  it("a throwing run, finalize, or a run with no agent fails the episode with an EnvError", async () => {
    const cases: [string, RegExp, number][] = [
      ["run", /^RepeatEnv\.run\(\): RangeError: the env gave up after its runs$/, 2],
      ["finalize", /^RepeatEnv\.finalize\(\): Error: no verdict$/, 2],
      ["idle", /^RepeatEnv\.run\(\): ValueError: RepeatEnv\.run\(\) ran no agent/, 0],
    ];
    for (const [fail, message, traces] of cases) {
      const r = await run(echoArgs(["--env.id", REPEAT, "--env.fail", fail]), tmp());
      const episodes = episodesOf(r.runDir);
      assert.equal(episodes.length, 2, fail);
      for (const ep of episodes) {
        assert.equal(ep.ok, false, fail);
        assert.equal(ep.traces.length, traces, fail);
        assert.equal(ep.errors.length, 1, fail);
        assert.equal(ep.errors[0]!.type, "EnvError", fail);
        assert.match(ep.errors[0]!.message, message, fail);
      }
    }
  });
});
