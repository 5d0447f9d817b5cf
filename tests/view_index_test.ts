/**
 * The run viewer's data side: statistics, the streamed traces.jsonl index (torn and
 * partial lines, a live run growing, a resume replacing the file), episodes read back by
 * offset, runs in Python's record shape, and the per-run view (tasks, pass@k, errors).
 */
import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { histogram, meanCi, passAtK } from "../lib/view/stats.ts";
import { RunIndex } from "../lib/view/run_index.ts";
import { episodeItems, runView } from "../lib/view/run_view.ts";
import { InputError } from "../kit/errors.ts";
import { fakeEpisode, mixedEpisodes, pythonEpisode, writeRunDir } from "./_view_runs.ts";
import { at } from "./_assert.ts";

const close = (a: number | null, b: number, eps = 1e-3) =>
  assert.ok(a !== null && Math.abs(a - b) < eps, `${a} ≉ ${b}`);

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "vf-view-test-"));
}

describe("view statistics", () => {
  it("gives Wilson's interval for 0/1 rewards and Student's t otherwise", () => {
    const w = meanCi([1, 1, 1, 1, 1, 1, 1, 0, 0, 0]);
    assert.equal(w.method, "wilson");
    close(w.mean, 0.7);
    close(w.low, 0.3968);
    close(w.high, 0.8922);
    const t = meanCi([1, 2, 3, 4]);
    assert.equal(t.method, "t");
    close(t.mean, 2.5);
    close(t.low, 2.5 - 3.182 * 0.645497);
    close(t.high, 2.5 + 3.182 * 0.645497);
    assert.deepEqual(meanCi([]), { n: 0, mean: null, low: null, high: null, method: null });
  });

  it("estimates pass@k without bias", () => {
    close(passAtK(5, 2, 1), 0.4, 1e-12);
    assert.equal(passAtK(5, 2, 5), 1);
    assert.equal(passAtK(5, 0, 3), 0);
    close(passAtK(4, 1, 2), 0.5);
    assert.equal(passAtK(2, 1, 3), null);
  });

  it("bins distinct values as bars and a continuous range as equal bins", () => {
    assert.deepEqual(histogram([0, 1, 1, 0, 1]), [{ lo: 0, hi: 0, count: 2 }, {
      lo: 1,
      hi: 1,
      count: 3,
    }]);
    const values = Array.from({ length: 100 }, (_, i) => i / 99);
    const bins = histogram(values, 10);
    assert.equal(bins.length, 10);
    assert.equal(bins.reduce((s, b) => s + b.count, 0), 100);
    assert.equal(at(bins, 9).hi, 1);
  });
});

describe("RunIndex", () => {
  it("indexes complete lines, skips torn ones, waits for a partial last line", () => {
    const dir = tempDir();
    try {
      const eps = mixedEpisodes(5, 5);
      const lines = eps.map((e) => JSON.stringify(e));
      const partial = JSON.stringify(fakeEpisode({ task: 9, reward: 1 }));
      writeFileSync(
        join(dir, "traces.jsonl"),
        `${lines[0]}\n${lines[1]}\n{"torn": tr\n\n${lines[2]}\n${lines[3]}\n${lines[4]}\n${
          partial.slice(0, 50)
        }`,
      );
      const index = new RunIndex(dir);
      assert.equal(index.rows.length, 5);
      assert.equal(index.unreadable, 1);
      assert.deepEqual(index.rows.map((r) => r.id), eps.map((e) => e.id));
      for (let i = 0; i < 5; i++) assert.equal(index.episodeText(i), lines[i]);
      assert.equal(index.episodeText(5), null);
      const v = index.version;
      assert.equal(index.refresh(), false);
      appendFileSync(join(dir, "traces.jsonl"), partial.slice(50) + "\n");
      assert.equal(index.refresh(), true);
      assert.ok(index.version > v);
      assert.equal(index.rows.length, 6);
      assert.equal(index.episodeText(5), partial);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads lines longer than its read chunk", () => {
    const dir = tempDir();
    try {
      const big = fakeEpisode({ task: 1, reward: 1, padding: 3_000_000 });
      writeRunDir(dir, [
        fakeEpisode({ task: 0, reward: 0 }),
        big,
        fakeEpisode({ task: 2, reward: 1 }),
      ]);
      const index = new RunIndex(dir);
      assert.equal(index.rows.length, 3);
      assert.equal(index.episodeText(1), JSON.stringify(big));
      assert.equal(at(index.rows, 2).task.key, "bench:task-2");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("indexes anew when the file is replaced (a resume rewrites it)", () => {
    const dir = tempDir();
    try {
      writeRunDir(dir, mixedEpisodes(6, 3));
      const index = new RunIndex(dir);
      assert.equal(index.rows.length, 6);
      const replacement = [fakeEpisode({ task: 42, reward: 1 })];
      writeFileSync(join(dir, "new.jsonl"), JSON.stringify(replacement[0]) + "\n");
      renameSync(join(dir, "new.jsonl"), join(dir, "traces.jsonl"));
      assert.equal(index.refresh(), true);
      assert.deepEqual(index.rows.map((r) => r.task.key), ["bench:task-42"]);
      assert.equal(index.episodeText(0), JSON.stringify(replacement[0]));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("opens a run that has no traces.jsonl yet and picks it up once written", () => {
    const dir = tempDir();
    try {
      mkdirSync(join(dir, "configs"));
      writeFileSync(join(dir, "configs", "eval.json"), JSON.stringify({ model: "m" }));
      const index = new RunIndex(dir);
      assert.equal(index.rows.length, 0);
      assert.equal(runView(index).header.model, "m");
      appendFileSync(
        join(dir, "traces.jsonl"),
        JSON.stringify(fakeEpisode({ task: 1, reward: 1 })) + "\n",
      );
      assert.equal(index.refresh(), true);
      assert.equal(index.rows.length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses a path that is not a run, with exit code 2", () => {
    const dir = tempDir();
    try {
      assert.throws(
        () => new RunIndex(join(dir, "nope")),
        (e) =>
          e instanceof InputError && e.exitCode === 2 && /No such run directory/.test(e.message),
      );
      assert.throws(
        () => new RunIndex(dir),
        (e) => e instanceof InputError && /no traces.jsonl/.test(e.message),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reads episodes in Python's record shape", () => {
    const dir = tempDir();
    try {
      writeRunDir(dir, [pythonEpisode(1, 1), pythonEpisode(2, 0)], {
        config: {
          model: "py-model",
          env: {
            taskset: { id: "py-set" },
            agent: { harness: { id: "null" }, runtime: { type: "subprocess" } },
          },
        },
      });
      const index = new RunIndex(dir);
      assert.equal(index.rows.length, 2);
      const a = at(index.rows, 0);
      assert.equal(a.task.key, "pyhash1");
      assert.equal(a.task.label, "py question 1");
      assert.equal(a.reward, 1);
      assert.equal(a.turns, 1);
      assert.equal(a.tokens, 11);
      assert.equal(a.judgeTokens, 6);
      assert.equal(a.stop, "no_tool_calls");
      const view = runView(index);
      assert.deepEqual(
        [
          view.header.taskset,
          view.header.model,
          view.header.harness,
          view.header.runtime,
          view.header.status,
        ],
        ["py-set", "py-model", "null", "subprocess", "running or unfinished"],
      );
      assert.equal(view.reward.mean, 0.5);
      assert.equal(view.header.wallSeconds !== null, true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a run written by Python verifiers v1", () => {
  it("reads the golden run Python's own models wrote (tests/fixtures/python_v1/golden)", () => {
    const dir = join(import.meta.dirname!, "fixtures", "python_v1", "golden", "reverse-text");
    const index = new RunIndex(dir);
    const lines = readFileSync(join(dir, "traces.jsonl"), "utf8").trimEnd().split("\n");
    assert.equal(index.rows.length, lines.length);
    assert.equal(index.unreadable, 0);
    lines.forEach((line, i) => assert.equal(index.episodeText(i), line));
    const first = JSON.parse(at(lines, 0));
    assert.equal(at(index.rows, 0).task.key, first.task.key);
    assert.equal(at(index.rows, 0).task.label, first.task.data.prompt);
    assert.equal(at(index.rows, 0).reward, first.traces[0].rewards.lcs.score);
    assert.equal(at(index.rows, 0).stop, first.traces[0].stop_condition);
    assert.equal(at(index.rows, 0).cost, first.traces[0].calls[0].usage.cost);
    const view = runView(index);
    assert.deepEqual(
      [
        view.header.title,
        view.header.taskset,
        view.header.model,
        view.header.harness,
        view.header.runtime,
      ],
      [
        "reverse-text--test-model--null--python0",
        "reverse-text",
        "test-model",
        "null",
        "subprocess",
      ],
    );
    assert.equal(view.tasks.length, lines.length);
    assert.equal(view.errors.length, 0);
  });
});

describe("runView", () => {
  it("makes the per-task table, pass@k and errors by type from the episodes", () => {
    const dir = tempDir();
    try {
      const eps = mixedEpisodes(30, 10);
      writeRunDir(dir, eps, {
        summary: {
          run: { name: "mixed" },
          model: "m",
          taskset: "bench",
          harness: "null",
          runtime: "local",
          status: "completed",
          counts: { expected: 30 },
          wall_time_s: 12.5,
        },
      });
      const index = new RunIndex(dir);
      const view = runView(index);
      assert.equal(view.header.title, "mixed");
      assert.equal(view.header.episodes, 30);
      assert.equal(view.header.wallSeconds, 12.5);
      const errored = eps.filter((e) => !e.ok);
      assert.equal(view.header.errored, errored.length);
      assert.equal(view.tasks.length, 10);
      assert.equal(view.binary, true);
      // task 3: rollouts i = 3, 13, 23; i = 3 and 24? errored when i % 7 === 3 (i = 3, 10, 17, 24)
      const t3 = view.tasks.find((t) => t.key === "bench:task-3")!;
      const rolls = eps.filter((e) => e.task.key === "bench:task-3");
      const clean = rolls.filter((e) => e.ok).map((e) => at(e.traces, 0).rewards.correct!.score);
      assert.equal(t3.n, 3);
      assert.equal(t3.errors, rolls.length - clean.length);
      assert.equal(t3.mean, clean.length ? clean.reduce((a, b) => a + b, 0) / clean.length : null);
      close(t3.pass1, passAtK(3, clean.filter((r) => r === 1).length, 1)!, 1e-12);
      const byType = new Map(view.errors.map((g) => [g.type, g]));
      assert.equal([...byType.values()].reduce((s, g) => s + g.count, 0), errored.length);
      for (const g of view.errors) {
        for (const m of g.messages) {
          assert.ok(m.message.startsWith(`${g.type} in episode`));
          assert.equal(at(at(index.rows, m.episode).errors, 0).type, g.type);
        }
      }
      const items = episodeItems(index.rows, { error: "TaskError" });
      assert.equal(
        items.length,
        errored.filter((e) => at(e.errors, 0).type === "TaskError").length,
      );
      assert.deepEqual(episodeItems(index.rows, { task: "bench:task-3" }).map((x) => x.i), [
        3,
        13,
        23,
      ]);
      assert.equal(view.reward.n, 30 - errored.length);
      assert.equal(view.histogram.reduce((s, b) => s + b.count, 0), view.reward.n);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shows a line read back byte for byte", () => {
    const dir = tempDir();
    try {
      writeRunDir(dir, [pythonEpisode(7, 1)]);
      const index = new RunIndex(join(dir, "traces.jsonl"));
      assert.equal(index.dir, dir);
      assert.equal(index.episodeText(0), readFileSync(join(dir, "traces.jsonl"), "utf8").trimEnd());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
