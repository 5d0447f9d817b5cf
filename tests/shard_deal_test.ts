import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { z } from "zod";
import { defineTaskset } from "../kit/contract.ts";
import { InputError } from "../kit/errors.ts";
import { taskHash } from "../kit/tasks/hash.ts";
import { seededRandom, TasksetView } from "../kit/taskset_view.ts";
import {
  parseShard,
  parseShardDirName,
  type Shard,
  shardDirName,
  shardOf,
  shardOwed,
  shardQuota,
  shardRollouts,
} from "../lib/run/shard.ts";
import { selectTasks } from "../lib/run/select.ts";

/** Tasks whose prompts repeat every `distinct` tasks (so task keys collide). */
const repeating = defineTaskset({
  id: "repeating",
  description: "count tasks, `distinct` different ones",
  config: z.object({ count: z.number().int(), distinct: z.number().int() }),
  *load(config) {
    for (let i = 0; i < config.count; i++) {
      yield { prompt: `task ${i % config.distinct}`, answer: String(i % config.distinct) };
    }
  },
});

function shardsOf(count: number): Shard[] {
  return Array.from({ length: count }, (_, index) => ({ index, count }));
}

describe("the deal of slots to shards", () => {
  it("gives every slot to exactly one shard, balanced within one, for many shapes", () => {
    const rand = seededRandom(42);
    for (let trial = 0; trial < 400; trial++) {
      const tasks = Math.floor(rand() * 30);
      const rollouts = 1 + Math.floor(rand() * 6);
      const n = 1 + Math.floor(rand() * 40); // often more shards than slots
      const owner = new Map<string, number>();
      const sizes: number[] = [];
      for (const shard of shardsOf(n)) {
        let size = 0;
        for (let p = 0; p < tasks; p++) {
          const rs = shardRollouts(p, rollouts, shard);
          assert.equal(rs.length, shardQuota(p, rollouts, shard), `quota of task ${p}`);
          for (const r of rs) {
            const slot = `${p}:${r}`;
            assert.equal(owner.has(slot), false, `slot ${slot} dealt twice (n=${n})`);
            owner.set(slot, shard.index);
            assert.equal(shardOf(p, r, rollouts, n), shard.index);
            size++;
          }
        }
        sizes.push(size);
      }
      assert.equal(owner.size, tasks * rollouts, `union of ${tasks}x${rollouts} over ${n}`);
      const total = tasks * rollouts;
      for (const size of sizes) {
        assert.ok(
          size === Math.floor(total / n) || size === Math.ceil(total / n),
          `shard of ${size} slots for ${total} over ${n}`,
        );
      }
    }
  });

  it("deals slot s = position × R + rollout to shard s mod n", () => {
    // 5 tasks × 3 rollouts over 4 shards: shard 1 holds slots 1, 5, 9 and 13
    const shard = { index: 1, count: 4 };
    const held = [0, 1, 2, 3, 4].flatMap((p) =>
      shardRollouts(p, 3, shard).map((r) => [p, r] as const)
    );
    assert.deepEqual(held, [[0, 1], [1, 2], [3, 0], [4, 1]]);
  });

  it("counts each shard's slots per task key over a shuffled selection, stable and complete", async () => {
    for (const seed of [0, 1, 7, 123]) {
      for (
        const [count, distinct, rollouts, n] of [[23, 23, 3, 4], [40, 7, 2, 5], [
          3,
          3,
          1,
          8,
        ]] as const
      ) {
        const view = () =>
          selectTasks(new TasksetView(repeating, { count, distinct }), {
            shuffle: true,
            seed,
            num_tasks: count - 1,
          });
        const want = new Map<string, number>();
        for await (const task of view()) {
          const key = taskHash(task);
          want.set(key, (want.get(key) ?? 0) + rollouts);
        }
        const got = new Map<string, number>();
        let slots = 0;
        for (const shard of shardsOf(n)) {
          const a = await shardOwed(view(), rollouts, shard);
          const b = await shardOwed(view(), rollouts, shard);
          assert.deepEqual([...a.owed], [...b.owed], "the same deal on every pass");
          assert.equal(a.tasks, count - 1);
          slots += a.slots;
          for (const [k, v] of a.owed) got.set(k, (got.get(k) ?? 0) + v);
        }
        assert.equal(slots, (count - 1) * rollouts);
        assert.deepEqual(new Map([...got].sort()), new Map([...want].sort()));
      }
    }
  });
});

describe("--shard", () => {
  const env = (vars: Record<string, string>) => (name: string) => vars[name];

  it("reads i/n, and auto/n from the Indexed Job or the Slurm array index", () => {
    assert.deepEqual(parseShard("2/4", env({})), { index: 2, count: 4 });
    assert.deepEqual(parseShard("auto/8", env({ JOB_COMPLETION_INDEX: "5" })), {
      index: 5,
      count: 8,
    });
    assert.deepEqual(parseShard("auto/8", env({ SLURM_ARRAY_TASK_ID: "3" })), {
      index: 3,
      count: 8,
    });
    assert.deepEqual(
      parseShard("auto/8", env({ JOB_COMPLETION_INDEX: "1", SLURM_ARRAY_TASK_ID: "3" })),
      { index: 1, count: 8 },
    );
  });

  it("refuses a missing or out-of-range index with an input error naming the flag", () => {
    for (
      const [value, vars] of [
        ["4/4", {}],
        ["auto/4", {}],
        ["auto/4", { JOB_COMPLETION_INDEX: "4" }],
        ["auto/4", { SLURM_ARRAY_TASK_ID: "-1" }],
        ["1/0", {}],
        ["one/4", {}],
      ] as const
    ) {
      assert.throws(() => parseShard(value, env(vars)), (e: unknown) => {
        assert.ok(e instanceof InputError, `${value}: ${e}`);
        assert.equal(e.exitCode, 2);
        assert.match(e.message, /--shard/);
        return true;
      });
    }
  });

  it("names shard folders shard-<i>-of-<n> and reads them back", () => {
    assert.equal(shardDirName({ index: 3, count: 16 }), "shard-3-of-16");
    assert.deepEqual(parseShardDirName("shard-3-of-16"), { index: 3, count: 16 });
    assert.equal(parseShardDirName("shard-16-of-16"), null);
    assert.equal(parseShardDirName("merged"), null);
  });
});
