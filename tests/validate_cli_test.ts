/**
 * `vf validate` end to end: the built-in tasksets' gold checks pass; a broken taskset fails
 * with its hook's output; a hook that hangs is cut at its timeout; kill -9 mid-run then
 * `--resume` runs exactly the tasks still owed; bad flags exit 2.
 *
 * @module
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";
import { cliArgv, runCli } from "./_cli.ts";
import { copyRunDir, realPythonUnavailable, runRealPython } from "./_python_v1.ts";

const LONG = { timeout: 120_000 };
const KIT = pathToFileURL(join(import.meta.dirname!, "..", "mod.ts")).href;

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "vf-validate-"));
}

/** The one run folder under `<dir>/outputs`. */
function onlyRun(dir: string): string {
  const runs = readdirSync(join(dir, "outputs"));
  assert.equal(runs.length, 1, `runs: ${runs}`);
  return join(dir, "outputs", runs[0]!);
}

function rows(runDir: string): Record<string, unknown>[] {
  return readFileSync(join(runDir, "results.jsonl"), "utf8").split("\n").filter((l) => l)
    .map((l) => JSON.parse(l));
}

/** A taskset whose tasks break in the ways a real one can. */
const BROKEN = `
import { defineTaskset, TaskError } from "${KIT}";
import { z } from "zod";
export default defineTaskset({
  id: "broken",
  description: "tasks with broken gold checks",
  config: z.object({}),
  load: () => ["fine", "throws", "false", "hangs", "setup-fails"].map((name, idx) => ({
    idx, name, prompt: "p",
  })),
  async setup(ctx) {
    if (ctx.task.name === "setup-fails") throw new TaskError("fixture missing: data.csv");
  },
  async validate(ctx) {
    const r = await ctx.runtime.run(["sh", "-c", "echo gold-output; echo 2 tests failed >&2; exit 1"], {});
    if (ctx.task.name === "throws") throw new TaskError("gold solution failed: " + r.stderr.trim());
    if (ctx.task.name === "false") return false;
    if (ctx.task.name === "hangs") return await new Promise(() => {});
    return true;
  },
});
`;

/** A taskset of ten slow tasks whose setup notes each run in a file (for resume). */
const SLOW = `
import { defineTaskset } from "${KIT}";
import { appendFileSync } from "node:fs";
import process from "node:process";
import { z } from "zod";
export default defineTaskset({
  id: "slow",
  description: "ten slow tasks",
  config: z.object({}),
  load: () => Array.from({ length: 10 }, (_, idx) => ({ idx, name: "t" + idx, prompt: "p" })),
  async setup(ctx) {
    appendFileSync(process.env.VF_TEST_MARKS, process.env.VF_TEST_LAUNCH + ":" + ctx.task.idx + "\\n");
    await new Promise((r) => setTimeout(r, 300));
  },
});
`;

describe("vf validate", () => {
  for (
    const [taskset, n] of [["shell-basics", 10], ["reverse-text", 4], ["addition", 4], [
      "echo",
      3,
    ]] as const
  ) {
    it(`the built-in ${taskset} tasks pass their gold checks`, LONG, async () => {
      const dir = tempDir();
      try {
        const r = await runCli(["validate", taskset, "-n", String(n), "--json"], { cwd: dir });
        assert.equal(r.code, 0, r.stderr);
        const summary = JSON.parse(r.stdout);
        assert.equal(summary.mode, "all");
        assert.equal(summary.outcomes.valid, n, r.stdout);
        assert.equal(summary.checks.gold.valid, n);
        const runDir = onlyRun(dir);
        assert.match(runDir, new RegExp(`${taskset}--validate--[0-9a-f]{8}$`));
        assert.deepEqual(JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8")), summary);
        assert.equal(rows(runDir).length, n);
        const saved = JSON.parse(readFileSync(join(runDir, "configs", "validate.json"), "utf8"));
        assert.equal(saved.taskset.id, taskset);
        assert.equal(saved.only_gold, false);
        assert.ok(existsSync(join(runDir, "logs", "validate.log")));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }

  it("a broken taskset fails with its hooks' output; a hanging hook is cut", LONG, async () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, "broken.ts"), BROKEN);
      const started = Date.now();
      const r = await runCli(["validate", "./broken.ts", "--timeout.total", "1"], { cwd: dir });
      assert.equal(r.code, 3, r.stderr);
      assert.ok(Date.now() - started < 60_000);
      const byName = new Map(rows(onlyRun(dir)).map((row) => [row.name, row]));
      assert.equal(byName.get("fine")!.reason, "valid");
      const thrown = byName.get("throws")!;
      assert.equal(thrown.reason, "error");
      assert.equal(thrown.error, "gold: validate: gold solution failed: 2 tests failed");
      assert.equal((thrown.gold as { error_type: string }).error_type, "TaskError");
      assert.equal((thrown.setup as { valid: boolean }).valid, true);
      assert.equal(byName.get("false")!.reason, "invalid");
      assert.equal(byName.get("false")!.error, "gold: invalid");
      const hung = byName.get("hangs")!;
      assert.equal(hung.reason, "timeout");
      assert.equal(hung.error, "gold: validate timed out after 1s");
      assert.equal(hung.error_type, "TimeoutError");
      const setup = byName.get("setup-fails")!;
      assert.equal(setup.reason, "error");
      assert.match(String(setup.error), /gold: setup: fixture missing: data\.csv; setup: setup:/);
      assert.match(r.stdout, /TIMEOUT task 3 \(hangs\) — gold: validate timed out after 1s/);
      assert.match(r.stdout, /1\/5 valid · 1 invalid · 2 error · 1 timeout \(all\)/);
      assert.match(
        r.stderr,
        /progress 5\/5 \(100\.0%\) .* valid 0\.200 · err 0\.800/,
        "the plain display",
      );

      const gold = await runCli([
        "validate",
        "./broken.ts",
        "--only-gold",
        "--timeout.total",
        "1",
        "--json",
      ], {
        cwd: dir,
      });
      assert.equal(gold.code, 3, gold.stderr);
      const s = JSON.parse(gold.stdout);
      assert.equal(s.mode, "gold");
      assert.deepEqual(s.outcomes, { valid: 1, invalid: 1, error: 2, timeout: 1, missing: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a setup that hangs is cut at --timeout.setup, its command killed", LONG, async () => {
    const dir = tempDir();
    try {
      const pidFile = join(dir, "setup.pid");
      // the hook ignores its signal and its command would run for five minutes
      writeFileSync(
        join(dir, "stuck.ts"),
        `
import { defineTaskset } from "${KIT}";
import { z } from "zod";
export default defineTaskset({
  id: "stuck",
  description: "a setup that never ends",
  config: z.object({}),
  load: () => [{ idx: 0, name: "stuck", prompt: "p" }],
  async setup(ctx) {
    await ctx.runtime.run(["sh", "-c", "echo $$ > ${pidFile}; exec sleep 300"], {});
  },
});
`,
      );
      const started = Date.now();
      const r = await runCli(
        ["validate", "./stuck.ts", "--only-setup", "--timeout.setup", "1", "--json"],
        { cwd: dir },
      );
      assert.equal(r.code, 3, r.stderr);
      assert.ok(Date.now() - started < 60_000, "cut at its timeout");
      assert.deepEqual(JSON.parse(r.stdout).outcomes, {
        valid: 0,
        invalid: 0,
        error: 0,
        timeout: 1,
        missing: 0,
      });
      const [row] = rows(onlyRun(dir));
      assert.equal(row!.error, "setup timed out after 1s");
      const pid = Number(readFileSync(pidFile, "utf8").trim());
      assert.ok(pid > 0);
      let alive = true;
      try {
        process.kill(pid, 0);
      } catch {
        alive = false;
      }
      assert.equal(alive, false, `the setup's command (pid ${pid}) was left running`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("kill -9 mid-run, then --resume runs exactly the tasks owed", LONG, async () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir, "slow.ts"), SLOW);
      const marks = join(dir, "marks.txt");
      writeFileSync(marks, "");
      const runDir = join(dir, "outputs", "slow-run");
      const [cmd, ...args] = cliArgv([
        "validate",
        "./slow.ts",
        "--only-setup",
        "-c",
        "1",
        "--run.name",
        "slow-run",
      ]);
      const child = spawn(cmd, args, {
        cwd: dir,
        env: { ...process.env, NO_COLOR: "1", VF_TEST_MARKS: marks, VF_TEST_LAUNCH: "1" },
        stdio: "ignore",
      });
      const closed = new Promise((resolve) => child.on("close", resolve));
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        if (existsSync(join(runDir, "results.jsonl")) && rows(runDir).length >= 3) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      child.kill("SIGKILL");
      await closed;
      const kept = rows(runDir).length;
      assert.ok(kept >= 3 && kept < 10, `kept ${kept}`);

      const r = await runCli(["validate", "--resume", runDir, "--json"], {
        cwd: dir,
        env: { VF_TEST_MARKS: marks, VF_TEST_LAUNCH: "2" },
      });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(JSON.parse(r.stdout).outcomes.valid, 10);
      const final = rows(runDir);
      assert.deepEqual(final.map((row) => row.index).sort((a, b) => Number(a) - Number(b)), [
        0,
        1,
        2,
        3,
        4,
        5,
        6,
        7,
        8,
        9,
      ]);
      const second = readFileSync(marks, "utf8").split("\n").filter((l) => l.startsWith("2:"));
      const keptIdx = new Set(final.slice(0, kept).map((row) => row.index));
      assert.equal(second.length, 10 - kept, "the resume ran more than was owed");
      for (const m of second) assert.ok(!keptIdx.has(Number(m.slice(2))), `re-ran kept ${m}`);
      const log = readFileSync(join(runDir, "logs", "validate.log"), "utf8");
      assert.match(log, new RegExp(`resuming ${10 - kept}/10 task\\(s\\)`));

      const again = await runCli(["validate", "--resume", runDir], { cwd: dir });
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stderr, /nothing to resume: all 10 task\(s\) are valid or invalid/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(
    "SIGINT stops the run with exit 130, keeping what finished; --resume does the rest",
    LONG,
    async () => {
      const dir = tempDir();
      try {
        writeFileSync(join(dir, "slow.ts"), SLOW);
        const marks = join(dir, "marks.txt");
        writeFileSync(marks, "");
        const runDir = join(dir, "outputs", "stopped");
        const [cmd, ...args] = cliArgv([
          "validate",
          "./slow.ts",
          "-c",
          "2",
          "--run.name",
          "stopped",
        ]);
        const child = spawn(cmd, args, {
          cwd: dir,
          env: { ...process.env, NO_COLOR: "1", VF_TEST_MARKS: marks, VF_TEST_LAUNCH: "1" },
          stdio: ["ignore", "pipe", "pipe"],
        });
        let stderr = "";
        child.stderr.setEncoding("utf8").on("data", (d: string) => stderr += d);
        child.stdout.resume();
        const closed = new Promise<string>((resolve) =>
          child.on("close", (code, sig) => resolve(String(code ?? sig)))
        );
        const deadline = Date.now() + 60_000;
        while (Date.now() < deadline) {
          if (existsSync(join(runDir, "results.jsonl")) && rows(runDir).length >= 2) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        // process.kill, not child.kill: Deno's child.kill reports the signal, not the exit code
        process.kill(child.pid!, "SIGINT");
        assert.equal(await closed, "130", stderr);
        assert.match(stderr, /SIGINT: stopping/);
        const kept = rows(runDir);
        assert.ok(kept.length >= 2 && kept.length < 10, `kept ${kept.length}`);
        for (const row of kept) {
          assert.equal(
            row.reason,
            "valid",
            "a cancelled check is not recorded",
          );
        }
        const summary = JSON.parse(readFileSync(join(runDir, "summary.json"), "utf8"));
        assert.equal(summary.outcomes.missing, 10 - kept.length);
        const r = await runCli(["validate", "--resume", runDir, "--json"], {
          cwd: dir,
          env: { VF_TEST_MARKS: marks, VF_TEST_LAUNCH: "2" },
        });
        assert.equal(r.code, 0, r.stderr);
        assert.equal(JSON.parse(r.stdout).outcomes.valid, 10);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it("Python v1's ValidateConfig and resume loader read the run", LONG, async () => {
    const why = realPythonUnavailable();
    if (why) {
      console.log(`# skipped the real Python v1 models check: ${why}`);
      return;
    }
    const dir = tempDir();
    try {
      const r = await runCli(["validate", "reverse-text", "-n", "3", "--run.name", "rv"], {
        cwd: dir,
      });
      assert.equal(r.code, 0, r.stderr);
      const runDir = join(dir, "outputs", "rv");
      const keys = rows(runDir).map((row) => row.task_key as string);
      const [config, resume] = runRealPython([
        {
          kind: "validate_config",
          value: JSON.parse(readFileSync(join(runDir, "configs", "validate.json"), "utf8")),
        },
        { kind: "validate_resume", value: { dir: copyRunDir(runDir), keys, mode: "all" } },
      ]);
      assert.deepEqual(config, { ok: true });
      assert.deepEqual(resume, { ok: true, kept: keys, owed: {} }, "Python keeps every row");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses bad flags with exit 2", LONG, async () => {
    const dir = tempDir();
    try {
      for (
        const args of [
          ["validate", "echo", "--only-setup", "--only-gold"],
          ["validate", "echo", "--timeout.total", "-1"],
          ["validate", "echo", "--no-such-flag", "1"],
          ["validate", "--resume", join(dir, "nowhere")],
        ]
      ) {
        const r = await runCli(args, { cwd: dir });
        assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
        assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
      }
      assert.ok(!existsSync(join(dir, "outputs")), "nothing written");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
