/**
 * A simulated Kubernetes Indexed Job: `n` local `vf eval --shard auto/<n>` processes told
 * their index by `JOB_COMPLETION_INDEX`, on the oracle model; some are killed with
 * SIGKILL mid-run and started again with the same command, one index is started twice at
 * once, then `vf merge`. The merge must hold what one process running the same config
 * holds: the same task-hash multiset, no duplicate, no loss, the same reward.
 */
import "./_builtins.ts";
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { cliArgv, runCli } from "./_cli.ts";
import { episodesOf, FAST, perTask, run, tmp, traceLines, waitFor } from "./_run.ts";
import { runDirProblems } from "./_python_v1.ts";

const N = 20;
const R = 2;
const SHARDS = 3;

/** The config of the run: slow sandbox stops make a shard last long enough to be killed. */
const CONFIG = [
  FAST,
  "--env.taskset.count",
  String(N),
  "--env.agent.harness.id",
  "null",
  "--env.agent.runtime.type",
  FAST,
  "--env.agent.runtime.stop_delay_ms",
  "120",
  "-r",
  String(R),
  "-c",
  "2",
  "-s",
  "--seed",
  "3",
  "-m",
  "oracle",
];

/** A shard's command, as the Job's pod template runs it (the same for every index). */
const SHARD_ARGS = ["eval", ...CONFIG, "--run.name", "job", "--shard", `auto/${SHARDS}`];

interface Started {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null; stderr: string }>;
}

/** Every process started, killed at the end if still there (a failed assertion). */
const children: ChildProcess[] = [];
after(() => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) process.kill(c.pid!, "SIGKILL");
  }
});

function startShard(cwd: string, index: number): Started {
  const [cmd, ...rest] = cliArgv([...SHARD_ARGS, "--display", "none"]);
  const child = spawn(cmd, rest, {
    cwd,
    env: { ...process.env, NO_COLOR: "1", JOB_COMPLETION_INDEX: String(index) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => stderr += d);
  const exited = new Promise<{ code: number | null; signal: string | null; stderr: string }>(
    (resolve) => child.on("close", (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exited };
}

function sorted(m: Map<string, number>): [string, number][] {
  return [...m].sort((a, b) => a[0].localeCompare(b[0]));
}

describe("a simulated Indexed Job", () => {
  it("survives kill -9, refuses a double start, and merges to the single-process run", {
    timeout: 240_000,
  }, async () => {
    const cwd = tmp("vf-job-");
    const single = await run([...CONFIG, "--run.name", "single"], cwd);
    const runDir = join(cwd, "outputs", "job");
    const shardDir = (i: number) => join(runDir, `shard-${i}-of-${SHARDS}`);

    // every index starts; index 1 is started twice at once: the twin starts while the
    // first holds the lease (frozen with SIGSTOP, so that it cannot finish first)
    const first = [0, 1, 2].map((i) => startShard(cwd, i));
    await waitFor(() => existsSync(join(shardDir(1), "lease.json")), 60_000);
    // process.kill: Deno's ChildProcess.kill sends no signal after a first one
    process.kill(first[1]!.child.pid!, "SIGSTOP");
    const twin = startShard(cwd, 1);
    const refused = await twin.exited;
    process.kill(first[1]!.child.pid!, "SIGCONT");
    assert.equal(refused.code, 75, refused.stderr);
    assert.match(refused.stderr, /leased by .*:\d+/);
    // indices 0 and 2 die by SIGKILL once they have saved an episode
    for (const i of [0, 2]) {
      await waitFor(() => traceLines(shardDir(i)).length >= 1, 60_000);
      first[i]!.child.kill("SIGKILL");
      const end = await first[i]!.exited;
      assert.equal(end.signal, "SIGKILL");
      const saved = traceLines(shardDir(i)).length;
      assert.ok(saved < Math.ceil((N * R) / SHARDS), `shard ${i} killed mid-run (${saved})`);
    }
    const one = await first[1]!.exited;
    assert.equal(one.code, 0, one.stderr);

    // the scheduler restarts the killed indices with the same command: they resume
    const again = await Promise.all([0, 2].map((i) => startShard(cwd, i).exited));
    for (const a of again) assert.equal(a.code, 0, a.stderr);

    const status = await runCli(["shards", "status", runDir], { cwd, timeoutMs: 60_000 });
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stderr, new RegExp(`${N * R} of ${N * R} slot\\(s\\) done, 0 owed`));

    const merge = await runCli(["merge", runDir], { cwd, timeoutMs: 60_000 });
    assert.equal(merge.code, 0, merge.stderr);
    const merged = join(runDir, "merged");
    assert.equal(merge.stdout.trim(), merged);
    const eps = episodesOf(merged);
    assert.equal(eps.length, N * R, "no loss");
    assert.equal(new Set(eps.map((e) => e.id)).size, N * R, "no duplicate");
    assert.deepEqual(sorted(perTask(eps)), sorted(perTask(episodesOf(single.runDir))));
    const summary = JSON.parse(readFileSync(join(merged, "summary.json"), "utf8"));
    assert.equal(summary.reward.mean, single.summary.reward.mean);
    assert.equal(summary.counts.episodes, N * R);
    assert.deepEqual(runDirProblems(merged), []);
    for (let i = 0; i < SHARDS; i++) assert.deepEqual(runDirProblems(shardDir(i)), []);
  });
});
