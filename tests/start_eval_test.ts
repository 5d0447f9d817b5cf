import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { ConfigError, InputError, startEval } from "../mod.ts";
import { runCli } from "./_cli.ts";
import { FAST, tmp } from "./_run.ts";
import { at } from "./_assert.ts";

/** A fast config as a plain object: `count` generated tasks, no model call, no disk. */
function fastConfig(count: number): Record<string, unknown> {
  return {
    env: {
      taskset: { id: FAST, count },
      agent: { harness: { id: FAST }, runtime: { type: FAST } },
    },
    model: "scripted",
    client: { base_url: "http://127.0.0.1:9/v1" }, // never called: the harness answers itself
  };
}

/** Every file under `dir`, relative, sorted (log attempt folders included). */
function tree(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

describe("startEval", () => {
  it("writes the run directory as vf eval does", async () => {
    const cwd = tmp();
    try {
      const messages: string[] = [];
      const run = await startEval({
        config: fastConfig(5),
        cwd,
        args: ["-r", "2"],
        onMessage: (m) => messages.push(m),
      });
      const seen: string[] = [];
      for await (const e of run) seen.push(e.id);
      const { summary, runDir, cancelled } = await run.done;
      assert.equal(cancelled, false);
      assert.ok(
        messages.every((m) => m.startsWith("warning: ")),
        `only warnings reach onMessage: ${messages}`,
      );
      assert.equal(seen.length, 10);
      assert.equal(summary.counts.episodes, 10);
      assert.ok(runDir?.startsWith(join(cwd, "outputs")));
      const lines = readFileSync(join(runDir!, "traces.jsonl"), "utf8").trim().split("\n");
      assert.deepEqual(lines.map((l) => JSON.parse(l).id).sort(), [...seen].sort());
      const cli = await runCli([
        "eval",
        FAST,
        "--env.taskset.count",
        "5",
        "--env.agent.harness.id",
        FAST,
        "--env.agent.runtime.type",
        FAST,
        "-m",
        "scripted",
        "--client.base-url",
        "http://127.0.0.1:9/v1",
        "-r",
        "2",
        "-o",
        "cli-out",
        "--display",
        "none",
      ], { cwd });
      assert.equal(cli.code, 0, cli.stderr);
      const cliDir = join(cwd, "cli-out", at(readdirSync(join(cwd, "cli-out")), 0));
      assert.deepEqual(tree(runDir!), tree(cliDir));
      const ours = JSON.parse(readFileSync(join(runDir!, "configs", "eval.json"), "utf8"));
      const theirs = JSON.parse(readFileSync(join(cliDir, "configs", "eval.json"), "utf8"));
      delete ours.run;
      delete theirs.run;
      delete ours.output_dir;
      delete theirs.output_dir;
      delete theirs.display;
      delete ours.display;
      assert.deepEqual(ours, theirs, "the same resolved config");
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("validates as the CLI does, before anything runs or is written", async () => {
    const cwd = tmp();
    try {
      await assert.rejects(
        startEval({ config: { ...fastConfig(2), num_rollouts: 0, colour: 1 }, cwd }),
        (e: unknown) =>
          e instanceof ConfigError && /num_rollouts/.test(e.message) &&
          /unknown key "colour"/.test(e.message),
      );
      await assert.rejects(
        startEval({ config: "missing.toml", cwd }),
        (e: unknown) =>
          e instanceof ConfigError &&
          /missing\.toml: cannot read config file: no such file/.test(e.message) &&
          /check the path/.test(e.hint ?? ""),
      );
      await assert.rejects(
        // deno-lint-ignore no-explicit-any
        startEval({ config: 42 as any, cwd }),
        (e: unknown) =>
          e instanceof InputError && e.code === "config_not_object" &&
          /a plain object of config keys, or the path of a TOML or JSON file/.test(e.hint ?? ""),
      );
      assert.deepEqual(readdirSync(cwd), []);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("runs in memory, summary only, and refuses to iterate then", async () => {
    const cwd = tmp();
    try {
      const run = await startEval({ config: fastConfig(4), cwd, runDir: null, episodes: false });
      assert.throws(() => run[Symbol.asyncIterator](), /keeps no episodes/);
      const { summary, runDir } = await run.done;
      assert.equal(runDir, null);
      assert.equal(summary.counts.episodes, 4);
      assert.deepEqual(readdirSync(cwd), []);
      assert.ok(!existsSync(join(cwd, "outputs")));
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("stops on abort: the iterator ends, done says cancelled", async () => {
    const cwd = tmp();
    try {
      const stop = new AbortController();
      const run = await startEval({
        config: fastConfig(500),
        args: ["--env.agent.harness.delay-ms", "20", "-c", "2"],
        cwd,
        signal: stop.signal,
      });
      let n = 0;
      for await (const _ of run) if (++n === 2) stop.abort();
      const { cancelled, summary, runDir } = await run.done;
      assert.equal(cancelled, true);
      assert.equal(summary.status, "cancelled");
      assert.ok(summary.counts.episodes < 500);
      const saved = JSON.parse(readFileSync(join(runDir!, "summary.json"), "utf8"));
      assert.equal(saved.status, "cancelled");
      assert.throws(() => run[Symbol.asyncIterator](), /iterated once/);
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
