import "./_builtins.ts";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { runEvalFromCli } from "../lib/cli/eval_run.ts";
import { RuntimeTracker } from "../lib/run/runtime_tracker.ts";
import { episodesOf, FAST, fastArgs, prepare, run, tmp } from "./_run.ts";
import { memRuntime } from "./fixtures/run/fast_plugins.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { at } from "./_assert.ts";

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

function modelArgs(fake: Fake, count: number, extra: string[] = []): string[] {
  return [
    FAST,
    "--env.taskset.count",
    String(count),
    "--env.agent.harness.id",
    "null",
    "--env.agent.runtime.type",
    FAST,
    "-m",
    "m",
    "--client.base-url",
    fake.url,
    "--client.api-key-var",
    "VF_EP_KEY",
    ...extra,
  ];
}

describe("episodes: env retries and the episode timeout", () => {
  let fake: Fake;
  const seen = new Map<string, number>();
  let latency = 0;
  before(async () => {
    process.env.VF_EP_KEY = "sk-ep";
    fake = await startFakeOpenAI({
      apiKey: "sk-ep",
      // each prompt is refused (400) the first time it is asked, answered after that
      script: async (body) => {
        if (latency) await new Promise((r) => setTimeout(r, latency));
        const prompt = String(body.messages.at(-1).content);
        const n = (seen.get(prompt) ?? 0) + 1;
        seen.set(prompt, n);
        return n === 1 ? { status: 400, error: `first try of ${prompt}` } : "fine";
      },
    });
  });
  after(() => fake.close());

  it("retries a failed episode under env.retries; the final one lists the earlier errors", async () => {
    seen.clear();
    const { runDir, summary } = await run(
      modelArgs(fake, 3, ["--env.retries.max-retries", "1", "-o", "a"]),
      tmp(),
    );
    const eps = episodesOf(runDir);
    assert.equal(eps.length, 3);
    for (const ep of eps) {
      assert.equal(ep.ok, true, JSON.stringify(ep.errors));
      assert.equal(ep.traces.length, 1);
      assert.equal(at(ep.traces, 0).ok, true);
      assert.deepEqual(ep.errors.map((e) => e.type), ["ProviderError"]);
      assert.match(at(ep.errors, 0).message, /first try of task \d/);
    }
    assert.equal(summary.error_fraction, 0);
    assert.equal(summary.errors_by_type.ProviderError, 3);
  });

  it("does not retry without env.retries, nor an excluded error type", async () => {
    seen.clear();
    const plain = await run(modelArgs(fake, 2, ["-o", "b"]), tmp());
    assert.ok(episodesOf(plain.runDir).every((e) => !e.ok && at(e.traces, 0).errors.length === 1));
    seen.clear();
    const excluded = await run(
      modelArgs(fake, 2, [
        "--env.retries.max-retries",
        "2",
        "--env.retries.exclude",
        '["ProviderError"]',
        "-o",
        "c",
      ]),
      tmp(),
    );
    assert.ok(episodesOf(excluded.runDir).every((e) => !e.ok));
    assert.equal(seen.size, 2);
    assert.ok([...seen.values()].every((n) => n === 1), "asked once each");
  });

  it("ends an episode past env.timeout.episode with a TimeoutError and no trace, as Python", async () => {
    seen.clear();
    latency = 5000;
    try {
      const { runDir, summary } = await run(
        modelArgs(fake, 2, ["--env.timeout.episode", "0.2", "-o", "d"]),
        tmp(),
        { graceMs: 5000 },
      );
      for (const ep of episodesOf(runDir)) {
        assert.equal(ep.ok, false);
        assert.deepEqual(ep.traces, []);
        assert.deepEqual(ep.errors.map((e) => [e.type, e.message]), [
          [
            "TimeoutError",
            "SingleAgentEnv.run() exceeded its 0.2s deadline (--env.timeout.episode)",
          ],
        ]);
      }
      assert.equal(summary.errors_by_type.TimeoutError, 2);
      assert.equal(summary.error_fraction, 1);
    } finally {
      latency = 0;
    }
  });
});

describe("runtimes at the end of a run", () => {
  it("confirms the stop of runtimes left running and names those it cannot confirm", async () => {
    const cwd = tmp();
    const p = await prepare(
      [...fastArgs(3), "--env.agent.runtime.fail-stop", "--run.name", "leaky"],
      cwd,
    );
    const err: string[] = [];
    const code = await runEvalFromCli(p.loaded, {
      runDir: p.runDir,
      cwd,
      err: (l) => err.push(l),
      out: () => {},
    });
    assert.equal(code, 0);
    const summary = JSON.parse(readFileSync(join(p.runDir, "summary.json"), "utf8"));
    assert.equal(summary.unconfirmed_sandboxes.length, 3);
    for (const u of summary.unconfirmed_sandboxes) {
      assert.equal(u.type, "mem");
      assert.match(u.id, /^mem-\d+$/);
      assert.equal(u.error, `cannot delete ${u.id}`);
      assert.ok(
        err.some((l) => l.includes(`sandbox not confirmed stopped: mem ${u.id}: cannot delete`)),
        err.join("\n"),
      );
    }
  });

  it("tracks only runtimes not yet stopped, and sweeps them", async () => {
    const tracker = new RuntimeTracker();
    const plugin = tracker.wrap(memRuntime);
    const a = plugin.create({ fail_stop: false }, { name: "a" });
    const b = plugin.create({ fail_stop: false }, { name: "b" });
    await a.start();
    await b.start();
    assert.equal(tracker.size, 2);
    await a.stop();
    tracker.prune();
    assert.equal(tracker.size, 1);
    assert.deepEqual(await tracker.sweep(), []);
    assert.equal(b.stopped, true);
    assert.equal(tracker.size, 0);
  });
});
