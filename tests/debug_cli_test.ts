/**
 * `vf debug` end to end: setup runs before the action, a command and an uploaded script run
 * in the task's runtime, a failing or hanging action is reported (the hang cut at
 * `--timeout.total`), traces validate against Python v1's schema, bad flags exit 2.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./_cli.ts";
import { episodeProblems, realPythonUnavailable, runRealPython } from "./_python_v1.ts";

const LONG = { timeout: 120_000 };

/** The traces of the one debug run under `<dir>/outputs/<taskset>--debug/`. */
function traces(dir: string, taskset: string): Record<string, unknown>[] {
  const root = join(dir, "outputs", `${taskset}--debug`);
  const [run] = readdirSync(root);
  const lines = readFileSync(join(root, run!, "traces.jsonl"), "utf8").trim().split("\n");
  for (const line of lines) assert.deepEqual(episodeProblems(line), []);
  return lines.map((l) => JSON.parse(l).traces[0]);
}

describe("vf debug", () => {
  let dir = "";
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "vf-debug-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("runs the command after each task's setup", LONG, async () => {
    const r = await runCli(
      [
        "debug",
        "shell-basics",
        "-n",
        "2",
        "--command",
        "find . -type f | sort; echo end",
        "--json",
      ],
      { cwd: dir },
    );
    assert.equal(r.code, 0, r.stderr);
    const infos = JSON.parse(r.stdout);
    assert.equal(infos.length, 2);
    assert.deepEqual(infos.map((i: { task: { name: string } }) => i.task.name), [
      "create-file",
      "count-csv-rows",
    ]);
    assert.equal(infos[0].stdout, "end\n", "create-file starts from an empty workdir");
    assert.equal(infos[1].stdout, "./data/sales.csv\nend\n", "the setup wrote the task's file");
    for (const info of infos) {
      assert.equal(info.reason, "pass");
      assert.equal(info.exit_code, 0);
      assert.equal(info.action, "command");
    }
    const ts = traces(dir, "shell-basics");
    assert.equal(ts.length, 2);
    for (const t of ts) {
      assert.equal((t.agent as { name: string }).name, "debug");
      assert.equal(t.stop_condition, "pass");
      const timing = t.timing as Record<string, { start: number; end: number }>;
      assert.ok(
        timing.setup!.end >= timing.setup!.start && timing.agent!.start >= timing.setup!.end,
      );
    }
  });

  it("uploads and runs a script; a failing one is reported with exit 3", LONG, async () => {
    const sub = mkdtempSync(join(dir, "script-"));
    writeFileSync(
      join(sub, "check.sh"),
      "#!/bin/sh\necho checking $(ls data)\necho broken >&2\nexit 4\n",
    );
    const r = await runCli(
      ["debug", "shell-basics", "-n", "2", "--script-path", "check.sh", "--json"],
      { cwd: sub },
    );
    assert.equal(r.code, 3, r.stderr);
    const [, second] = JSON.parse(r.stdout);
    assert.equal(second.action, "script");
    assert.equal(second.reason, "nonzero_exit");
    assert.equal(second.exit_code, 4);
    assert.equal(second.stdout, "checking sales.csv\n");
    assert.equal(second.stderr, "broken\n");
    const [, t] = traces(sub, "shell-basics");
    assert.equal(t!.ok, false);
    assert.equal(t!.stop_condition, "nonzero_exit");
  });

  it("cuts a hanging command at --timeout.total", LONG, async () => {
    const sub = mkdtempSync(join(dir, "hang-"));
    const started = Date.now();
    const r = await runCli(
      ["debug", "echo", "-n", "1", "--command", "sleep 600", "--timeout.total", "1", "--json"],
      { cwd: sub },
    );
    assert.equal(r.code, 3, r.stderr);
    assert.ok(Date.now() - started < 60_000);
    const [info] = JSON.parse(r.stdout);
    assert.equal(info.reason, "timeout");
    assert.equal(info.error, "debug action timed out after 1s");
    assert.equal(info.error_type, "TimeoutError");
  });

  it("Python v1's DebugConfig and episode reader read the run", LONG, async () => {
    const why = realPythonUnavailable();
    if (why) {
      console.log(`# skipped the real Python v1 models check: ${why}`);
      return;
    }
    const sub = mkdtempSync(join(dir, "python-"));
    const r = await runCli(["debug", "reverse-text", "-n", "2", "--command", "true", "-o", "out"], {
      cwd: sub,
    });
    assert.equal(r.code, 0, r.stderr);
    const config = JSON.parse(readFileSync(join(sub, "out", "configs", "debug.json"), "utf8"));
    assert.deepEqual(
      runRealPython([
        { kind: "debug_config", value: config },
        { kind: "read_episodes", value: join(sub, "out") },
      ]),
      [{ ok: true }, { ok: true, count: 2 }],
    );
  });

  it("refuses bad flags with exit 2", LONG, async () => {
    for (
      const args of [
        ["debug", "echo"],
        ["debug", "echo", "--command", "true", "--script-path", "x.sh"],
        ["debug", "echo", "--script-path", "missing.sh"],
      ]
    ) {
      const r = await runCli(args, { cwd: dir });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }
  });
});
