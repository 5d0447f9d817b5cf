import "./_builtins.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { runEvalFromCli } from "../lib/cli/eval_run.ts";
import { cliArgv, runCli } from "./_cli.ts";
import { episodesOf, FAST, fastArgs, prepare, tmp, traceLines, waitFor } from "./_run.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";

type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

/**
 * Sends a signal with `process.kill` (under Deno, `ChildProcess.kill` makes the child's
 * exit look like a death by that signal even when the child handled it and exited).
 */
function signal(pid: number, name: "SIGINT" | "SIGTERM"): void {
  process.kill(pid, name);
}

/** `vf eval` of `count` generated tasks through the null harness against `fake`. */
function modelArgs(fake: Fake, count: number, extra: string[] = []): string[] {
  return [
    "eval",
    FAST,
    "--env.taskset.count",
    String(count),
    "--env.agent.harness.id",
    "null",
    "-m",
    "m",
    "--client.base-url",
    fake.url,
    "--client.api-key-var",
    "VF_CLI_KEY",
    ...extra,
  ];
}

const ENV = { VF_CLI_KEY: "sk-cli" };

/** The fake model's script: a 400 for the prompts of odd tasks, else an answer. */
function oddTasksFail(body: Record<string, unknown>) {
  const msgs = body.messages as { role: string; content: string }[];
  const n = Number(/task (\d+)/.exec(msgs.at(-1)!.content)?.[1]);
  return n % 2 === 1 ? { status: 400, error: `task ${n} is refused` } : `answer ${n}`;
}

describe("vf eval exit codes and output", () => {
  let fake: Fake;
  before(async () => {
    fake = await startFakeOpenAI({ apiKey: "sk-cli", script: oddTasksFail });
  });
  after(() => fake.close());

  it("--fail-on-error turns too many errored episodes into exit 3; without it the run exits 0", async () => {
    const cwd = tmp();
    const plain = await runCli(modelArgs(fake, 6, ["--display", "plain"]), { cwd, env: ENV });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /errors\s+0\.50 {2}\(ProviderError 3\)/);

    const over = await runCli(modelArgs(fake, 6, ["--fail-on-error", "0.4"]), { cwd, env: ENV });
    assert.equal(over.code, 3, over.stderr);
    assert.match(over.stderr, /3 of 6 episodes errored, past --fail-on-error 0\.4 \(exit 3\)/);
    assert.match(over.stdout, /failed +3 errored episodes exceed --fail-on-error 0\.4/);
  });

  it("reads --fail-on-error below 1 as a fraction and from 1 up as a count", async () => {
    const cases: [string, number][] = [["0.5", 0], ["0", 3], ["3", 3], ["4", 0], ["1", 3]];
    for (const [threshold, code] of cases) {
      const cwd = tmp();
      const p = await prepare(
        modelArgs(fake, 6, ["--fail-on-error", threshold]).slice(1),
        cwd,
      );
      process.env.VF_CLI_KEY = "sk-cli";
      const got = await runEvalFromCli(p.loaded, {
        runDir: p.runDir,
        cwd,
        err: () => {},
        out: () => {},
      });
      assert.equal(got, code, `--fail-on-error ${threshold}`);
      const summary = JSON.parse(readFileSync(join(p.runDir, "summary.json"), "utf8"));
      assert.deepEqual(summary.fail_on_error, {
        threshold: Number(threshold),
        exceeded: code === 3,
      });
    }
  });

  it("display=json prints the final summary as JSON and nothing else on stdout", async () => {
    const cwd = tmp();
    const r = await runCli(modelArgs(fake, 4, ["--display", "json", "--run.name", "j"]), {
      cwd,
      env: ENV,
    });
    assert.equal(r.code, 0, r.stderr);
    const parsed = JSON.parse(r.stdout);
    const file = JSON.parse(readFileSync(join(cwd, "outputs", "j", "summary.json"), "utf8"));
    assert.deepEqual(parsed, file);
    assert.equal(parsed.counts.episodes, 4);
    assert.doesNotMatch(r.stderr, /progress/, "no live progress in json mode");
  });

  it("display=plain writes progress lines to stderr and the table to stdout; none prints nothing", async () => {
    const cwd = tmp();
    const r = await runCli(modelArgs(fake, 4, ["--display", "plain"]), { cwd, env: ENV });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^vf eval · .* · null harness · subprocess runtime$/m);
    assert.match(
      r.stderr,
      /^progress 4\/4 \(100\.0%\) · .* · reward 1\.000 \(0\.500\) · err 0\.500/m,
    );
    assert.match(r.stdout, /^reward +1\.000 \(0\.500\)$/m);
    assert.doesNotMatch(r.stdout, /progress/);
    const none = await runCli(modelArgs(fake, 2, ["--display", "none"]), { cwd, env: ENV });
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, "");
    assert.equal(none.stderr, "");
  });

  it("auto is plain when stderr is not a terminal", async () => {
    const cwd = tmp();
    const r = await runCli(modelArgs(fake, 2), { cwd, env: { ...ENV, CI: "true" } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^progress 2\/2/m);
    assert.equal(r.stderr.includes("\x1b["), false, "no ANSI sequences");
  });
});

describe("signals", () => {
  let fake: Fake;
  before(async () => {
    fake = await startFakeOpenAI({ apiKey: "sk-cli", latencyMs: 150 });
  });
  after(() => fake.close());

  /** Starts a slow run; resolves when `lines` episodes are saved. */
  async function startSlowRun(cwd: string, lines: number) {
    const workdirs = join(cwd, "workdirs");
    const args = modelArgs(fake, 40, [
      "-c",
      "3",
      "--run.name",
      "sig",
      "--display",
      "plain",
      "--env.agent.runtime.workdir-root",
      workdirs,
    ]);
    const [cmd, ...rest] = cliArgv(args);
    const child = spawn(cmd, rest, {
      cwd,
      env: { ...process.env, NO_COLOR: "1", ...ENV },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const done = new Promise<{ code: number | null; signal: string | null }>((r) =>
      child.on("close", (code, signal) => r({ code, signal }))
    );
    const runDir = join(cwd, "outputs", "sig");
    await waitFor(() => traceLines(runDir).length >= lines, 60_000);
    return { child, done, runDir, workdirs, out: () => stdout, err: () => stderr };
  }

  it(
    "SIGINT stops a run whose rollouts never wait on I/O, and says when its heap cannot be collected",
    {
      timeout: 90_000,
    },
    async () => {
      const cwd = tmp();
      const count = 5_000_000; // hours of in-process rollouts: only the signal ends this run
      const [cmd, ...rest] = cliArgv([
        "eval",
        ...fastArgs(count),
        "-c",
        "32",
        "--run.name",
        "inproc",
        "--display",
        "plain",
      ]);
      const child = spawn(cmd, rest, {
        cwd,
        env: { ...process.env, NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.stdout.resume();
      const done = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
      const runDir = join(cwd, "outputs", "inproc");
      // under Deno started without --expose-gc (as here), the run says its heap grows unchecked
      // once it has grown past the heap trim's floor; Bun always lets the run collect
      const collectable = typeof (globalThis as { Bun?: unknown }).Bun === "object";
      await waitFor(
        () => collectable ? traceLines(runDir).length > 0 : /cannot collect its heap/.test(stderr),
        60_000,
      );
      signal(child.pid!, "SIGINT");
      const stoppedBy = Date.now() + 20_000;
      const code = await Promise.race([
        done,
        new Promise<"late">((r) => setTimeout(() => r("late"), stoppedBy - Date.now())),
      ]);
      if (code === "late") child.kill("SIGKILL");
      assert.equal(code, 130, `still running 20 s after SIGINT (stderr: ${stderr.slice(-500)})`);
      assert.match(stderr, /SIGINT: stopping/);
      const summary = JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8"));
      assert.equal(summary.status, "cancelled");
      assert.ok(summary.counts.episodes > 0 && summary.counts.episodes < count);
      assert.equal(/cannot collect its heap/.test(stderr), !collectable, stderr.slice(-500));
    },
  );

  it("first SIGINT: stops, cancels rollouts in flight, saves, writes the summary, exits 130", {
    timeout: 90_000,
  }, async () => {
    const cwd = tmp();
    const run = await startSlowRun(cwd, 3);
    signal(run.child.pid!, "SIGINT");
    const { code } = await run.done;
    assert.equal(code, 130, run.err());
    const eps = episodesOf(run.runDir); // every line parses
    assert.ok(eps.length >= 3 && eps.length < 40, `${eps.length} episodes saved`);
    assert.ok(eps.every((e) => e.ok), "cancelled episodes are not saved (they are owed)");
    const summary = JSON.parse(readFileSync(join(run.runDir, "summary.json"), "utf8"));
    assert.equal(summary.status, "cancelled");
    assert.equal(summary.counts.episodes, eps.length);
    assert.deepEqual(summary.unconfirmed_sandboxes, []);
    assert.deepEqual(readdirSync(run.workdirs), [], "every runtime was stopped");
    assert.match(run.err(), /SIGINT: stopping/);
    assert.match(run.out(), /cancelled/);
    // and the run resumes to the full count
    const r = await runCli(["eval", "--resume", run.runDir, "--display", "none"], {
      cwd,
      env: ENV,
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(episodesOf(run.runDir).length, 40);
  });

  it(
    "a second signal exits at once, while the first is still winding down, without tearing traces.jsonl",
    { timeout: 90_000 },
    async () => {
      const cwd = tmp();
      const runDir = join(cwd, "outputs", "twice");
      // rollouts after the fourth take a minute to tear their runtime down, so the
      // graceful stop of the first signal cannot finish before the second one arrives
      const args = [
        "eval",
        FAST,
        "--env.taskset.count",
        "40",
        "--env.agent.harness.id",
        FAST,
        "--env.agent.harness.delay-ms",
        "50",
        "--env.agent.runtime.type",
        FAST,
        "--env.agent.runtime.stop-delay-ms",
        "60000",
        "--env.agent.runtime.slow-after",
        "4",
        "-m",
        "m",
        "-c",
        "2",
        "--run.name",
        "twice",
        "--display",
        "plain",
      ];
      const [cmd, ...rest] = cliArgv(args);
      const child = spawn(cmd, rest, { cwd, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      const done = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
      await waitFor(() => traceLines(runDir).length >= 3, 60_000);
      signal(child.pid!, "SIGTERM");
      await waitFor(() => /SIGTERM: stopping/.test(stderr), 10_000);
      signal(child.pid!, "SIGTERM");
      assert.equal(await done, 130, stderr);
      assert.equal(existsSync(join(runDir, "summary.json")), false, "it did not wait to finish");
      const text = readFileSync(join(runDir, "traces.jsonl"), "utf8");
      assert.ok(text.endsWith("\n"), "no torn line");
      const eps = text.split("\n").filter((l) => l).map((l) => JSON.parse(l));
      assert.ok(eps.length >= 3);
    },
  );
});
