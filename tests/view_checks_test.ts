/**
 * The viewer's reading of `vf validate` and `vf replay` run folders, without a browser: a
 * validate run still being written (a torn last line, rows appended later), Python's rows
 * without our `task_key`, and a replay whose source folder is gone (shown alone) or open
 * already (not opened twice).
 *
 * @module
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openRuns, RunIndex } from "../lib/view/run_index.ts";
import { runView } from "../lib/view/run_view.ts";
import { fakeEpisode, writeRunDir } from "./_view_runs.ts";

const row = (index: number, reason: string, error: string | null, key?: string) =>
  JSON.stringify({
    index,
    name: `t${index}`,
    mode: "gold",
    valid: reason === "valid",
    reason,
    elapsed: 0.5,
    error,
    error_type: error ? "TaskError" : null,
    ...(key ? { task_key: key } : {}),
  }) + "\n";

describe("vf view of validate and replay folders", () => {
  it("follows a validate run as its rows land; a torn line waits", () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-view-checks-"));
    try {
      mkdirSync(join(dir, "configs"));
      writeFileSync(
        join(dir, "configs", "validate.json"),
        JSON.stringify({ taskset: { id: "broken" }, runtime: { type: "subprocess" } }),
      );
      writeFileSync(join(dir, "summary.json"), JSON.stringify({ mode: "gold", total: 3 }));
      writeFileSync(join(dir, "results.jsonl"), row(0, "valid", null, "k0") + '{"index": 1, "na');
      const index = new RunIndex(dir);
      assert.equal(index.kind, "validate");
      let view = runView(index);
      assert.equal(view.kind, "validate");
      assert.equal(view.header.taskset, "broken");
      assert.equal(view.header.runtime, "subprocess");
      assert.equal(view.header.status, "running or unfinished");
      assert.deepEqual(view.validate!.outcomes, {
        valid: 1,
        invalid: 0,
        error: 0,
        timeout: 0,
        missing: 2,
      });
      const before = index.version;
      writeFileSync(
        join(dir, "results.jsonl"),
        row(0, "valid", null, "k0") + row(1, "error", "validate: 2 tests failed") +
          row(2, "invalid", null),
      );
      writeFileSync(
        join(dir, "summary.json"),
        JSON.stringify({ mode: "gold", total: 3, outcomes: { missing: 0 } }),
      );
      assert.ok(index.refresh());
      assert.ok(index.version > before, "a page polling the run sees the change");
      view = runView(index);
      assert.equal(view.header.status, "completed");
      const checks = view.validate!.checks;
      assert.deepEqual(checks.map((c) => c.key), ["k0", "task-1", "task-2"]);
      assert.equal(checks[1]!.error, "validate: 2 tests failed");
      assert.equal(checks[1]!.errorType, "TaskError");
      assert.equal(checks[1]!.label, "1: t1");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("opens a replay's source beside it once, and shows a replay alone when it is gone", () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-view-checks-"));
    try {
      const source = writeRunDir(join(dir, "source"), [fakeEpisode({ task: 0, reward: 1 })]);
      const replay = writeRunDir(join(dir, "replay"), [fakeEpisode({ task: 0, reward: 0 })]);
      mkdirSync(join(replay, "configs"), { recursive: true });
      writeFileSync(join(replay, "configs", "replay.json"), "{}");
      const summary = (src: string) =>
        JSON.stringify({
          source: src,
          rescores: 2,
          skipped_signals: [],
          tasks: [{
            key: "bench:task-0",
            rewards: [0, 1],
            mean: 0.5,
            std: 0.5,
            source_rewards: [1],
          }],
        });
      writeFileSync(join(replay, "summary.json"), summary(source));
      let runs = openRuns([replay]);
      assert.equal(runs.length, 2);
      assert.equal(runs[0]!.sourceRun, 1);
      assert.equal(runs[1]!.dir, source);
      const view = runView(runs[0]!);
      assert.equal(view.kind, "replay");
      assert.equal(view.header.status, "completed");
      assert.deepEqual(view.replay!.tasks, [{
        key: "bench:task-0",
        label: "task-0",
        rewards: [0, 1],
        mean: 0.5,
        std: 0.5,
        sourceRewards: [1],
        sourceMean: 1,
        change: -0.5,
      }]);
      runs = openRuns([source, replay]);
      assert.equal(runs.length, 2, "the source is not opened twice");
      assert.equal(runs[1]!.sourceRun, 0);
      writeFileSync(join(replay, "summary.json"), summary(join(dir, "gone")));
      runs = openRuns([replay]);
      assert.equal(runs.length, 1);
      assert.equal(runView(runs[0]!).replay!.sourceRun, null);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
