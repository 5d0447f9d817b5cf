import "./_builtins.ts";
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { InputError } from "../kit/errors.ts";
import { ledgerDir, recordSandbox, useLedgerDir } from "../kit/runtime/ledger.ts";
import { runCli } from "./_cli.ts";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { runEval } from "../lib/run/run_eval.ts";
import { placeShard } from "../lib/run/shard_place.ts";
import { mergeShards, readShardedRun } from "../lib/run/shard_merge.ts";
import { episodesOf, fastArgs, perTask, run, tmp, traceLines } from "./_run.ts";
import { acquireLease } from "../lib/run/lease.ts";
import { runDirProblems } from "./_python_v1.ts";

after(() => useLedgerDir(null));

/** Runs shard `i` of `n` in-process; returns its directory and the run's result. */
async function runShardResult(argv: string[], cwd: string, i: number, n: number) {
  const loaded = await loadEvalConfig([...argv, "--shard", `${i}/${n}`, "--display", "none"], {
    cwd,
  });
  const placed = placeShard(loaded.config, cwd, () => undefined, undefined)!;
  const result = await runEval(loaded, { runDir: placed.runDir, cwd });
  useLedgerDir(null);
  return { dir: placed.runDir, result, config: loaded.config };
}

async function runShard(argv: string[], cwd: string, i: number, n: number): Promise<string> {
  return (await runShardResult(argv, cwd, i, n)).dir;
}

const ARGS = [...fastArgs(7), "-r", "3", "-s", "--seed", "5", "--run.name", "sharded"];

function sorted(m: Map<string, number>): [string, number][] {
  return [...m].sort((a, b) => a[0].localeCompare(b[0]));
}

describe("a shard launched again", () => {
  it("resumes its own folder with the same command; --clean starts it over", async () => {
    const cwd = tmp();
    const first = await runShardResult(ARGS, cwd, 1, 2);
    assert.equal(first.dir, join(cwd, "outputs", "sharded", "shard-1-of-2"));
    assert.equal(traceLines(first.dir).length, 10); // slots 1, 3, ..., 19 of 21
    const again = await runShardResult(ARGS, cwd, 1, 2);
    assert.equal(again.config.resume, true);
    assert.match(again.result.nothingToResume ?? "", /all 10 \(this shard's\) rollouts/);
    assert.equal(traceLines(first.dir).length, 10);
    const clean = await runShardResult([...ARGS, "--clean"], cwd, 1, 2);
    assert.equal(clean.config.resume, false);
    assert.equal(clean.result.summary.counts.kept, 0);
    assert.equal(traceLines(first.dir).length, 10);
    // a folder another process holds is never cleaned
    const lease = acquireLease(first.dir);
    await assert.rejects(runShardResult([...ARGS, "--clean"], cwd, 1, 2), /leased by/);
    lease.release();
    assert.equal(traceLines(first.dir).length, 10);
  });
});

describe("a shard's sandbox ledger", () => {
  it("lives in the shard folder, where vf sandboxes list --run finds it", async () => {
    const cwd = tmp();
    const loaded = await loadEvalConfig([...ARGS, "--shard", "0/2", "--display", "none"], { cwd });
    const placed = placeShard(loaded.config, cwd, () => undefined, undefined)!;
    assert.equal(ledgerDir(), join(placed.runDir, "sandboxes"));
    recordSandbox({ provider: "prime", id: "sbx-leaked", created_at: new Date().toISOString() });
    useLedgerDir(null);
    const env = { VF_CACHE_DIR: tmp("vf-cache-") };
    const there = await runCli(["sandboxes", "list", "--json", "--run", placed.runDir], { env });
    assert.equal(there.code, 0, there.stderr);
    assert.deepEqual(JSON.parse(there.stdout).map((e: { id: string }) => e.id), ["sbx-leaked"]);
    const userCache = await runCli(["sandboxes", "list", "--json"], { env });
    assert.deepEqual(JSON.parse(userCache.stdout), []);
  });
});

describe("vf merge", () => {
  it("merges n shards into the episodes of a single run, Python-readable", async () => {
    const cwd = tmp();
    const single = await run([...fastArgs(7), "-r", "3", "-s", "--seed", "5"], cwd);
    for (let i = 0; i < 4; i++) await runShard(ARGS, cwd, i, 4);
    const runDir = join(cwd, "outputs", "sharded");
    const merged = await mergeShards(runDir, join(runDir, "merged"), cwd);
    assert.equal(merged.tally.owedSlots.length, 0);
    const eps = episodesOf(merged.outDir);
    assert.equal(eps.length, 21);
    assert.deepEqual(sorted(perTask(eps)), sorted(perTask(episodesOf(single.runDir))));
    assert.equal(merged.summary.reward.mean, single.summary.reward.mean);
    assert.deepEqual(runDirProblems(merged.outDir), []);
    const side = JSON.parse(
      readFileSync(join(merged.outDir, "configs", "verifiers-ts.json"), "utf8"),
    );
    assert.equal("shard" in side, false, "the merged config has no shard key");
  });

  it("keeps one episode per slot, an ok one first, and reports the surplus", async () => {
    const cwd = tmp();
    const dirs: string[] = [];
    for (let i = 0; i < 3; i++) dirs.push(await runShard(ARGS, cwd, i, 3));
    const traces = join(dirs[1]!, "traces.jsonl");
    const [first, ...rest] = readFileSync(traces, "utf8").split("\n").filter(Boolean);
    const errored = JSON.stringify({ ...JSON.parse(first!), ok: false });
    // an errored copy before the ok line, a duplicate after it, a torn last line
    writeFileSync(traces, [errored, first, ...rest, first].join("\n") + '\n{"torn');
    const runDir = join(cwd, "outputs", "sharded");
    const merged = await mergeShards(runDir, join(runDir, "merged"), cwd);
    const shard = merged.tally.shards[1]!;
    assert.equal(shard.surplus, 2);
    assert.equal(shard.malformed, 1);
    assert.equal(shard.errored, 0);
    const eps = episodesOf(merged.outDir);
    assert.equal(eps.length, 21);
    assert.ok(eps.every((e) => e.ok), "the ok episode was kept over the errored one");
    assert.equal(new Set(eps.map((e) => e.id)).size, 21, "no duplicate");
  });

  it("names the owed slots and their shard; --resume on the merge finishes the run", async () => {
    const cwd = tmp();
    for (let i = 0; i < 4; i++) if (i !== 2) await runShard(ARGS, cwd, i, 4);
    const runDir = join(cwd, "outputs", "sharded");
    const merged = await mergeShards(runDir, join(runDir, "merged"), cwd);
    const owed = merged.tally.owedSlots;
    assert.equal(owed.length, 5); // 21 slots over 4 shards: shard 2 holds 2, 6, 10, 14, 18
    assert.deepEqual(owed.map((s) => s.position * 3 + s.rollout), [2, 6, 10, 14, 18]);
    assert.ok(owed.every((s) => s.shard === 2));
    assert.equal(merged.tally.shards[2]!.dir, null);
    assert.equal(episodesOf(merged.outDir).length, 16);
    const resumed = await run(["--resume", merged.outDir], cwd);
    assert.equal(resumed.summary.counts.episodes, 21);
    const single = await run([...fastArgs(7), "-r", "3", "-s", "--seed", "5"], cwd);
    assert.deepEqual(
      sorted(perTask(episodesOf(merged.outDir))),
      sorted(perTask(episodesOf(single.runDir))),
    );
    // a merged directory a resume has finished is never written over
    await assert.rejects(mergeShards(runDir, merged.outDir, cwd), /holds a run/);
  });

  it("refuses shards whose configs or shard counts differ", async () => {
    const cwd = tmp();
    const a = await runShard(ARGS, cwd, 0, 2);
    await runShard(ARGS, cwd, 1, 2);
    const runDir = join(cwd, "outputs", "sharded");
    const evalJson = join(a, "configs", "eval.json");
    const saved = readFileSync(evalJson, "utf8");
    writeFileSync(evalJson, JSON.stringify({ ...JSON.parse(saved), max_concurrent: 3 }));
    await assert.rejects(readShardedRun(runDir, cwd), (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.equal(e.code, "shard_mismatch");
      assert.match(e.message, /shard 0 and shard 1 differ in `max_concurrent`/);
      return true;
    });
    writeFileSync(evalJson, saved);
    await runShard(ARGS, cwd, 0, 3);
    await assert.rejects(readShardedRun(runDir, cwd), /disagree on the shard count \(2, 3\)/);
    rmSync(join(runDir, "shard-0-of-3"), { recursive: true });
    assert.equal((await readShardedRun(runDir, cwd)).tally.owedSlots.length, 0);
    assert.equal(existsSync(join(runDir, "merged")), false, "reading writes nothing");
  });

  it("gives empty shards when there are fewer slots than shards", async () => {
    const cwd = tmp();
    const args = [...fastArgs(2), "--run.name", "few"];
    for (let i = 0; i < 5; i++) await runShard(args, cwd, i, 5);
    const runDir = join(cwd, "outputs", "few");
    appendFileSync(join(runDir, "shard-4-of-5", "traces.jsonl"), "");
    const merged = await mergeShards(runDir, join(runDir, "merged"), cwd);
    assert.deepEqual(merged.tally.shards.map((s) => s.slots), [1, 1, 0, 0, 0]);
    assert.equal(episodesOf(merged.outDir).length, 2);
    assert.equal(merged.tally.owedSlots.length, 0);
  });
});
