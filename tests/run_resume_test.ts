import "./_builtins.ts";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { InputError } from "../kit/errors.ts";
import { runEval } from "../lib/run/run_eval.ts";
import { taskHash } from "../kit/tasks/hash.ts";
import { traceReward } from "../kit/trace/derived.ts";
import { cliArgv, runCli } from "./_cli.ts";
import {
  episodesOf,
  FAST,
  fastArgs,
  perTask,
  prepare,
  run,
  tmp,
  traceLines,
  waitFor,
} from "./_run.ts";
import { startFakeOpenAI } from "./fakes/openai_server.ts";
import { at } from "./_assert.ts";

const evalJson = (runDir: string) => join(runDir, "configs", "eval.json");

/** A finished fast run of `tasks` × `rollouts` under `cwd`. */
async function fastRun(cwd: string, tasks: number, rollouts: number) {
  return await run([...fastArgs(tasks), "-r", String(rollouts), "-c", "3"], cwd);
}

/** Resumes a run in-process as `vf eval @ <run>/configs/eval.json --resume`. */
async function resume(runDir: string, cwd: string, extra: string[] = []) {
  const p = await prepare(["@", evalJson(runDir), "--resume", ...extra], cwd);
  assert.equal(p.runDir, runDir);
  return await runEval(p.loaded, { runDir: p.runDir, cwd });
}

function assertQuotas(runDir: string, tasks: number, rollouts: number) {
  const eps = episodesOf(runDir);
  assert.equal(eps.length, tasks * rollouts, "exactly N×R episodes");
  const counts = perTask(eps);
  assert.equal(counts.size, tasks, "every task present");
  for (const [hash, n] of counts) assert.equal(n, rollouts, `task ${hash} has ${n}`);
  for (const e of eps) assert.equal(taskHash(e.task.data), e.task.hash);
  assert.equal(new Set(eps.map((e) => e.id)).size, eps.length, "no duplicate episode");
}

describe("resume", () => {
  it("drops a torn last line and redoes only that episode; the summary covers the whole run", async () => {
    const cwd = tmp();
    const { runDir } = await fastRun(cwd, 6, 2);
    const lines = traceLines(runDir);
    const torn = lines.slice(0, -1).join("\n") + "\n" + lines.at(-1)!.slice(0, 200);
    writeFileSync(join(runDir, "traces.jsonl"), torn);
    writeFileSync(join(runDir, "traces.jsonl.resume-99999"), "left by a killed resume");
    const result = await resume(runDir, cwd);
    assert.equal(existsSync(join(runDir, "traces.jsonl.resume-99999")), false);
    assertQuotas(runDir, 6, 2);
    const after = traceLines(runDir);
    assert.deepEqual(after.slice(0, 11), lines.slice(0, 11), "kept lines are byte for byte");
    assert.equal(result.summary.counts.kept, 11);
    assert.equal(result.summary.counts.episodes, 12);
    assert.equal(result.summary.counts.expected, 12);
    const rewards = episodesOf(runDir).map((e) => traceReward(at(e.traces, 0)));
    assert.equal(result.summary.reward.mean, rewards.reduce((a, b) => a + b, 0) / 12);
    const summaryFile = JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8"));
    assert.equal(summaryFile.counts.episodes, 12);
    assert.equal(summaryFile.attempt, 2);
    assert.equal(readlinkSync(join(runDir, "logs", "latest")), "attempt_2");
  });

  it("keeps ok episodes up to each task's quota; redoes errored, foreign, surplus and garbage lines", async () => {
    const cwd = tmp();
    const { runDir } = await fastRun(cwd, 4, 3);
    const eps = episodesOf(runDir);
    const lines = traceLines(runDir);
    const errored = { ...at(eps, 0), ok: false, id: "errored" };
    const second = at(eps, 1);
    const foreign = { ...second, id: "foreign", task: { ...second.task, data: { prompt: "x" } } };
    const other = eps.find((e) => e.task.hash !== at(eps, 0).task.hash)!;
    const surplus = { ...other, id: "surplus" }; // its task's quota is full already
    const kept = lines.slice(1); // the first line is replaced by its errored copy
    writeFileSync(
      join(runDir, "traces.jsonl"),
      [JSON.stringify(errored), ...kept, JSON.stringify(foreign), JSON.stringify(surplus)]
        .join("\n") + "\n{not json\n[1,2]\n",
    );
    const result = await resume(runDir, cwd);
    assertQuotas(runDir, 4, 3);
    const ids = new Set(episodesOf(runDir).map((e) => e.id));
    for (const gone of ["errored", "foreign", "surplus"]) assert.equal(ids.has(gone), false);
    assert.equal(result.summary.counts.kept, 11);
    assert.ok(episodesOf(runDir).every((e) => e.ok));
    const log = readFileSync(join(runDir, "logs", "latest", "eval.log"), "utf8");
    assert.match(
      log,
      /kept 11, owed 1 of 12; dropped 1 errored, 1 malformed\/torn, 1 invalid, 1 foreign, 1 surplus lines; traces.jsonl rewritten/,
    );
  });

  it("says there is nothing to resume, and exits 0, when every rollout is done", async () => {
    const cwd = tmp();
    const { runDir } = await fastRun(cwd, 3, 2);
    const before = readFileSync(join(runDir, "traces.jsonl"), "utf8");
    const result = await resume(runDir, cwd);
    assert.equal(
      result.nothingToResume,
      `nothing to resume in ${runDir}: all 3x2 rollouts already completed without error`,
    );
    assert.equal(readFileSync(join(runDir, "traces.jsonl"), "utf8"), before);
    const r = await runCli(["eval", "--resume", runDir], { cwd });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /nothing to resume in .*: all 3x2 rollouts already completed/);
    assert.equal(r.stdout, "");
  });

  it("refuses a config whose digest differs, naming the keys; display may change", async () => {
    const cwd = tmp();
    const { runDir } = await fastRun(cwd, 3, 1);
    writeFileSync(join(runDir, "traces.jsonl"), traceLines(runDir).slice(0, 1).join("\n") + "\n");
    await assert.rejects(
      resume(runDir, cwd, ["-r", "2", "--sampling.temperature", "0.5"]),
      (e: unknown) =>
        e instanceof InputError && e.code === "resume_config_differs" &&
        e.message.includes("`num_rollouts`, `sampling`") && e.message.includes(runDir),
    );
    assert.equal(traceLines(runDir).length, 1, "a refused resume changes nothing");
    const ok = await resume(runDir, cwd, ["--display", "plain", "--fail-on-error", "0.5"]);
    assert.equal(ok.summary.counts.episodes, 3);
  });

  it("refuses to resume a directory that holds no run", async () => {
    const cwd = tmp();
    const p = await prepare([...fastArgs(2), "--run.name", "never-ran", "--resume"], cwd);
    await assert.rejects(
      runEval(p.loaded, { runDir: p.runDir, cwd }),
      (e: unknown) => e instanceof InputError && e.code === "resume_no_run",
    );
  });

  it("takes `--resume <run-dir>` as `@ <run-dir>/configs/eval.json --resume`", async () => {
    const cwd = tmp();
    const { runDir } = await fastRun(cwd, 2, 2);
    const elsewhere = tmp();
    const p = await prepare(["--resume", runDir], elsewhere);
    assert.equal(p.runDir, runDir, "the named directory, whatever the working directory");
    assert.equal(p.loaded.config.resume, true);
    assert.equal(p.loaded.config.num_rollouts, 2);
    const r = await runEval(p.loaded, { runDir: p.runDir, cwd: elsewhere });
    assert.match(r.nothingToResume ?? "", /nothing to resume/);
  });
});

describe("run directory guards", () => {
  it("refuses a run directory with results unless --resume or --clean; --clean starts over", async () => {
    const cwd = tmp();
    const { runDir } = await run([...fastArgs(2), "--run.name", "r1"], cwd);
    await assert.rejects(
      run([...fastArgs(2), "--run.name", "r1"], cwd),
      (e: unknown) =>
        e instanceof InputError && e.code === "run_dir_has_results" &&
        /already contains results/.test(e.message) && /--resume/.test(e.hint ?? ""),
    );
    appendFileSync(join(runDir, "stale.txt"), "x");
    const again = await run([...fastArgs(2), "--run.name", "r1", "--clean"], cwd);
    assert.equal(again.runDir, runDir);
    assert.equal(existsSync(join(runDir, "stale.txt")), false, "--clean removed the old run");
    assert.deepEqual(readdirSync(join(runDir, "logs")).sort(), ["attempt_1", "latest"]);
    assert.equal(traceLines(runDir).length, 2);
  });

  it("--clean refuses a directory not strictly inside output_dir", async () => {
    const cwd = tmp();
    const outside = await run([...fastArgs(1), "-o", "runs", "--run.dir", "../victim"], cwd);
    assert.equal(outside.runDir, join(cwd, "victim"));
    await assert.rejects(
      run([...fastArgs(1), "-o", "runs", "--run.dir", "../victim", "--clean"], cwd),
      (e: unknown) => e instanceof InputError && e.code === "clean_outside_output",
    );
    assert.equal(traceLines(outside.runDir).length, 1, "nothing was deleted");
    mkdirSync(join(cwd, "runs", "x"), { recursive: true });
    await assert.rejects(
      run([...fastArgs(1), "-o", "runs", "--run.dir", ".", "--clean"], cwd),
      (e: unknown) => e instanceof InputError && e.code === "clean_outside_output",
    );
  });
});

describe("a run killed with SIGKILL", () => {
  let fake: Awaited<ReturnType<typeof startFakeOpenAI>>;
  before(async () => {
    fake = await startFakeOpenAI({ latencyMs: 80, apiKey: "sk-kill" });
  });
  after(() => fake.close());

  it("resumes to exactly the owed rollouts: N×R episodes, each task's quota, no duplicate", {
    timeout: 90_000,
  }, async () => {
    const cwd = tmp();
    const N = 12;
    const R = 3;
    const args = [
      "eval",
      FAST,
      "--env.taskset.count",
      String(N),
      "--env.agent.harness.id",
      "null",
      "--env.agent.runtime.type",
      FAST,
      "-r",
      String(R),
      "-c",
      "4",
      "-m",
      "slow-model",
      "--client.base-url",
      fake.url,
      "--client.api-key-var",
      "VF_KILL_KEY",
      "--run.name",
      "killed",
      "--display",
      "plain",
    ];
    const runDir = join(cwd, "outputs", "killed");
    const [cmd, ...rest] = cliArgv(args);
    const child = spawn(cmd, rest, {
      cwd,
      env: { ...process.env, NO_COLOR: "1", VF_KILL_KEY: "sk-kill" },
      stdio: "ignore",
    });
    const exited = new Promise<string | null>((r) => child.on("exit", (_c, sig) => r(sig)));
    await waitFor(() => traceLines(runDir).length >= 5, 60_000);
    child.kill("SIGKILL");
    assert.equal(await exited, "SIGKILL");
    const before = traceLines(runDir).length;
    assert.ok(before < N * R, `killed mid-run (${before} lines)`);

    const r = await runCli(["eval", "--resume", runDir, "--display", "plain"], {
      cwd,
      env: { VF_KILL_KEY: "sk-kill" },
      timeoutMs: 60_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assertQuotas(runDir, N, R);
    assert.ok(episodesOf(runDir).every((e) => e.ok));
    const summary = JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8"));
    assert.equal(summary.counts.episodes, N * R);
    assert.ok(summary.counts.kept >= before - 1, "the saved episodes were kept");
    assert.match(r.stdout, new RegExp(`done +${N * R}/${N * R} episodes`));
  });
});
