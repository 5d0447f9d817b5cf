import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InputError, PluginError } from "../kit/errors.ts";
import { defineTaskset, type TasksetPlugin } from "../kit/contract.ts";
import { taskHash } from "../kit/tasks/hash.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import { seededRandom, seededShuffle, TasksetView } from "../kit/taskset_view.ts";
import { z } from "zod";

/** An infinite taskset that counts how many tasks its generator built and how often it loaded. */
function counting(): { plugin: TasksetPlugin; built: () => number; loads: () => number } {
  let built = 0;
  let loads = 0;
  const plugin = defineTaskset({
    id: "counting",
    description: "endless numbers",
    config: z.object({}),
    infinite: true,
    load() {
      loads++;
      return (function* () {
        for (let i = 0;; i++) {
          built++;
          yield { prompt: `task ${i}`, answer: String(i) };
        }
      })();
    },
  });
  return { plugin, built: () => built, loads: () => loads };
}

function finite(n: number, extra: Partial<TasksetPlugin> = {}): TasksetPlugin {
  const tasks: TaskData[] = Array.from(
    { length: n },
    (_, i) => ({ prompt: `q${i}`, answer: String(i) }),
  );
  return defineTaskset({
    id: "finite",
    description: "n numbers",
    config: z.object({}),
    load: () => tasks,
    ...extra,
  });
}

async function collect(view: AsyncIterable<TaskData>): Promise<TaskData[]> {
  const out: TaskData[] = [];
  for await (const t of view) out.push(t);
  return out;
}

const idxs = (tasks: TaskData[]) => tasks.map((t) => t.idx);

describe("TasksetView", () => {
  it("head() bounds an infinite taskset", async () => {
    const { plugin } = counting();
    const base = new TasksetView(plugin, {});
    assert.equal(base.infinite, true);
    const head = base.head(5);
    assert.equal(head.infinite, false);
    const tasks = await collect(head);
    assert.deepEqual(idxs(tasks), [0, 1, 2, 3, 4]);
    assert.deepEqual(tasks.map((t) => t.answer), ["0", "1", "2", "3", "4"]);
  });

  it("a finite taskset yields all tasks with key == hash", async () => {
    const view = new TasksetView(finite(7), {});
    const tasks = await view.toArray();
    assert.equal(tasks.length, 7);
    assert.deepEqual(idxs(tasks), [0, 1, 2, 3, 4, 5, 6]);
    for (const t of tasks) assert.equal(view.key(t), taskHash(t));
    assert.equal(new Set(tasks.map((t) => view.key(t))).size, 7);
  });

  it("key() uses the taskset's key hook when it has one", async () => {
    const view = new TasksetView(finite(2, { key: (t) => `k:${String(t.answer)}` }), {});
    const tasks = await view.toArray();
    assert.deepEqual(tasks.map((t) => view.key(t)), ["k:0", "k:1"]);
  });

  it("default shuffle is reproducible and differs from head order", async () => {
    const view = new TasksetView(finite(20), {});
    const a = idxs(await collect(view.shuffle()));
    const b = idxs(await collect(view.shuffle()));
    const c = idxs(await collect(view.shuffle(0)));
    assert.deepEqual(a, b);
    assert.deepEqual(a, c);
    assert.notDeepEqual(a, idxs(await collect(view.head(20))));
    assert.deepEqual([...a].sort((x, y) => x! - y!), Array.from({ length: 20 }, (_, i) => i));
  });

  it("a seeded shuffle differs from the default one", async () => {
    const view = new TasksetView(finite(20), {});
    const def = idxs(await collect(view.shuffle()));
    const seeded = idxs(await collect(view.shuffle(1)));
    assert.notDeepEqual(seeded, def);
    assert.deepEqual(seeded, idxs(await collect(view.shuffle(1))));
  });

  it("shuffle() on an infinite taskset raises", () => {
    const { plugin, loads } = counting();
    const view = new TasksetView(plugin, {});
    assert.throws(
      () => view.shuffle(),
      (e: unknown) =>
        e instanceof InputError &&
        e.message === "counting is infinite - cannot shuffle; bound it first with head(num_tasks)",
    );
    assert.throws(() => view.shuffle(3), /infinite/);
    assert.equal(loads(), 0);
  });

  it("head(5).shuffle() permutes 0..4", async () => {
    const { plugin } = counting();
    const tasks = await collect(new TasksetView(plugin, {}).head(5).shuffle());
    const order = idxs(tasks);
    assert.deepEqual([...order].sort(), [0, 1, 2, 3, 4]);
    assert.notDeepEqual(order, [0, 1, 2, 3, 4]);
  });

  it("head(3) builds exactly 3 tasks, and only when iterated", async () => {
    const { plugin, built, loads } = counting();
    const head = new TasksetView(plugin, {}).head(3);
    assert.equal(loads(), 0);
    assert.equal(built(), 0);
    assert.equal((await collect(head)).length, 3);
    assert.equal(built(), 3);
    assert.equal(loads(), 1);
    assert.equal((await collect(new TasksetView(plugin, {}).head(0))).length, 0);
    assert.equal(built(), 3);
  });

  it("views do not mutate the base view or the plugin's tasks", async () => {
    const { plugin } = counting();
    const base = new TasksetView(plugin, {});
    base.head(2);
    assert.equal(base.infinite, true);
    assert.equal(plugin.infinite, true);
    assert.throws(() => base.shuffle(), /infinite/);

    const source: TaskData[] = [{ prompt: "a", system_prompt: "orig" }, { prompt: "b", idx: 10 }];
    const fin = new TasksetView(
      defineTaskset({ id: "s", description: "", config: z.object({}), load: () => source }),
      {
        system_prompt: "override",
      },
    );
    const shuffled = fin.shuffle(5);
    assert.equal((await collect(shuffled)).length, 2);
    const tasks = await collect(fin);
    assert.deepEqual(tasks, [
      { prompt: "a", system_prompt: "override", idx: 0 },
      { prompt: "b", idx: 10, system_prompt: "override" },
    ]);
    assert.deepEqual(source, [{ prompt: "a", system_prompt: "orig" }, { prompt: "b", idx: 10 }]);
  });

  it("keeps task system prompts when the config has none", async () => {
    const view = new TasksetView(
      defineTaskset({
        id: "s",
        description: "",
        config: z.object({}),
        load: () => [{ prompt: "a", system_prompt: "own" }],
      }),
      { system_prompt: null },
    );
    assert.deepEqual(await view.toArray(), [{ prompt: "a", system_prompt: "own", idx: 0 }]);
  });

  it("accepts arrays, iterables, generators, async generators and promises from load()", async () => {
    const rows: TaskData[] = [{ prompt: "x" }, { prompt: "y" }];
    const loaders: Array<() => ReturnType<TasksetPlugin["load"]>> = [
      () => rows,
      () => new Set(rows),
      () =>
        (function* () {
          yield* rows;
        })(),
      () =>
        (async function* () {
          for (const r of rows) {
            await Promise.resolve();
            yield r;
          }
        })(),
      () => Promise.resolve(rows),
    ];
    for (const load of loaders) {
      const view = new TasksetView(
        defineTaskset({ id: "l", description: "", config: z.object({}), load }),
        {},
      );
      assert.deepEqual((await view.toArray()).map((t) => t.prompt), ["x", "y"]);
    }
  });

  it("refuses a load() result that is not iterable, and non-object tasks", async () => {
    const bad = defineTaskset({
      id: "bad",
      description: "",
      config: z.object({}),
      load: () => 42 as unknown as TaskData[],
    });
    await assert.rejects(new TasksetView(bad, {}).toArray(), PluginError);
    const worse = defineTaskset({
      id: "worse",
      description: "",
      config: z.object({}),
      load: () => ["text" as unknown as TaskData],
    });
    await assert.rejects(new TasksetView(worse, {}).toArray(), /non-object task at position 0/);
  });

  it("turns a load() or a task source that throws into a typed error naming the taskset", async () => {
    const throwing = (load: () => Iterable<TaskData> | AsyncIterable<TaskData>) =>
      new TasksetView(
        defineTaskset({ id: "flaky", description: "", config: z.object({}), load }),
        {},
      );
    const cases = [
      () => {
        throw new Error("rows.jsonl: no such file");
      },
      () =>
        (async function* () {
          yield { prompt: "x" } as TaskData;
          throw new Error("rows.jsonl: no such file");
        })(),
    ];
    for (const load of cases) {
      await assert.rejects(throwing(load).toArray(), (e: unknown) => {
        assert.ok(e instanceof PluginError);
        assert.equal(e.code, "taskset_load_failed");
        assert.match(
          e.message,
          /taskset 'flaky' failed to load its tasks: rows\.jsonl: no such file/,
        );
        return true;
      });
    }
  });

  it("refuses invalid head sizes and seeds, and collecting an infinite view", async () => {
    const view = new TasksetView(finite(3), {});
    assert.throws(() => view.head(-1), InputError);
    assert.throws(() => view.head(1.5), InputError);
    assert.throws(() => view.shuffle(0.5), InputError);
    await assert.rejects(new TasksetView(counting().plugin, {}).toArray(), /infinite/);
  });
});

describe("seededShuffle()", () => {
  it("is a deterministic permutation that depends on the seed", () => {
    const base = Array.from({ length: 50 }, (_, i) => i);
    const a = seededShuffle([...base], 0);
    assert.deepEqual(a, seededShuffle([...base], 0));
    assert.deepEqual([...a].sort((x, y) => x - y), base);
    assert.notDeepEqual(a, base);
    assert.notDeepEqual(seededShuffle([...base], 2 ** 32), a);
    assert.notDeepEqual(seededShuffle([...base], -1), a);
  });

  it("seededRandom() yields floats in [0, 1)", () => {
    const rand = seededRandom(123);
    for (let i = 0; i < 1000; i++) {
      const x = rand();
      assert.ok(x >= 0 && x < 1);
    }
  });
});
