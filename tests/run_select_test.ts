import "./_builtins.ts";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { InputError } from "../kit/errors.ts";
import { countSelected, selectTasks } from "../lib/run/select.ts";
import { TasksetView } from "../kit/taskset_view.ts";
import { episodesOf, fastArgs, prepare, run, tmp } from "./_run.ts";
import { generated, genTaskset } from "./fixtures/run/fast_plugins.ts";
import { runEval } from "../lib/run/run_eval.ts";

const idxOf = (runDir: string) => episodesOf(runDir).map((e) => e.task.data.idx as number);

describe("task selection", () => {
  it("shuffles (seed 0 by default) before taking num_tasks, in the order episodes run", async () => {
    const cwd = tmp();
    // -c 1: episodes are written in the order they are scheduled
    const { runDir } = await run([...fastArgs(20), "-s", "-n", "5", "-c", "1", "-r", "2"], cwd);
    const got = idxOf(runDir);
    const order = (await new TasksetView(genTaskset, { count: 20 }).shuffle(0).head(5).toArray())
      .map((t) => t.idx);
    assert.deepEqual(got, order.flatMap((i) => [i, i]), "each task's rollouts in selection order");
    // shuffle came first: the picks are not the first five tasks in some order
    assert.notDeepEqual([...new Set(got)].sort((a, b) => a - b), [0, 1, 2, 3, 4]);

    const seeded = await run([...fastArgs(20), "-s", "--seed", "7", "-n", "5", "-c", "1"], cwd);
    const again = await run([...fastArgs(20), "-s", "--seed", "7", "-n", "5", "-c", "1"], cwd);
    assert.deepEqual(idxOf(seeded.runDir), idxOf(again.runDir), "same seed, same selection");
    assert.notDeepEqual(idxOf(seeded.runDir), order, "another seed, another selection");
  });

  it("takes tasks in load order without shuffle, and num_tasks bounds them", async () => {
    const { runDir, summary } = await run([...fastArgs(9), "-n", "4", "-c", "1"], tmp());
    assert.deepEqual(idxOf(runDir), [0, 1, 2, 3]);
    assert.equal(summary.counts.expected, 4);
  });

  it("refuses an infinite taskset without -n before touching the disk", async () => {
    const cwd = tmp();
    const p = await prepare(["addition", "-m", "scripted", "-o", "out"], cwd);
    await assert.rejects(
      runEval(p.loaded, { runDir: p.runDir, cwd }),
      (e: unknown) =>
        e instanceof InputError && e.code === "taskset_infinite" &&
        /addition" is infinite - bound the run with -n/.test(e.message),
    );
    assert.equal(existsSync(join(cwd, "out")), false, "no run directory was made");
  });

  it("counts the selection without keeping tasks, and never loads an infinite taskset", async () => {
    const view = new TasksetView(genTaskset, { count: 50 });
    const loads = generated.length;
    assert.equal(await countSelected(view, { shuffle: true, seed: 3, num_tasks: 7 }), 7);
    assert.equal(generated.at(-1), 7, "the counting pass stopped at num_tasks");
    assert.equal(await countSelected(view, { shuffle: false, seed: null, num_tasks: null }), 50);
    assert.equal(generated.length, loads + 2);
    const infinite = new TasksetView({ ...genTaskset, infinite: true }, { count: 10 });
    assert.equal(await countSelected(infinite, { shuffle: false, seed: null, num_tasks: 99 }), 99);
    assert.equal(generated.length, loads + 2, "an infinite taskset is not loaded to count");
    assert.throws(
      () => selectTasks(infinite, { shuffle: false, seed: null, num_tasks: null }),
      /is infinite - bound the run with -n/,
    );
  });
});
