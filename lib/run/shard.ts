/**
 * Sharded runs: the run's episode slots — (selected task position `p`, rollout index `r`),
 * after the usual shuffle and `num_tasks` selection — numbered `s = p × R + r` and dealt
 * round-robin: slot `s` belongs to shard `s mod n`. Every slot lands in exactly one shard,
 * each shard holds `floor(S / n)` or `ceil(S / n)` of the `S` slots (fewer slots than
 * shards leaves the last shards empty), and the deal depends on nothing but `(p, r, n)`,
 * so every process, runtime and restart computes the same one.
 *
 * A shard is an ordinary run directory `<run dir>/shard-<i>-of-<n>/`: its config holds
 * `shard = "i/n"`, and what it owes is a count per task key, as a resume's is.
 *
 * @module
 */
import { InputError } from "../../kit/errors.ts";
import { taskHash } from "../../kit/tasks/hash.ts";
import type { TasksetView } from "../../kit/taskset_view.ts";

/** One shard of a run: `index` in `0..count-1`. */
export interface Shard {
  index: number;
  count: number;
}

/** The environment variables `--shard auto/<n>` reads, first found wins. */
export const SHARD_INDEX_VARS = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"] as const;

const HINT = "give --shard <i>/<n> with 0 <= i < n (e.g. --shard 0/4), or --shard auto/<n> " +
  `with ${SHARD_INDEX_VARS.join(" or ")} set`;

function bad(message: string): InputError {
  return new InputError("shard_invalid", `Invalid --shard: ${message}`, { hint: HINT });
}

/**
 * Parses `i/n` or `auto/n` (then `i` comes from {@link SHARD_INDEX_VARS} in `env`). A
 * missing or out-of-range index is an input error naming `--shard`.
 */
export function parseShard(value: string, env: (name: string) => string | undefined): Shard {
  const m = /^\s*(auto|\d+)\s*\/\s*(\d+)\s*$/.exec(value);
  if (!m) throw bad(`"${value}" is not <i>/<n> or auto/<n>`);
  const count = Number(m[2]);
  if (!Number.isSafeInteger(count) || count < 1) throw bad(`the shard count must be >= 1`);
  let text = m[1]!;
  if (text === "auto") {
    const name = SHARD_INDEX_VARS.find((v) => (env(v) ?? "").trim() !== "");
    if (name === undefined) throw bad(`auto/${count} needs ${SHARD_INDEX_VARS.join(" or ")}`);
    text = env(name)!.trim();
    if (!/^\d+$/.test(text)) throw bad(`${name}="${text}" is not a shard index`);
  }
  const index = Number(text);
  if (!Number.isSafeInteger(index) || index >= count) {
    throw bad(`index ${text} is out of range for ${count} shard${count === 1 ? "" : "s"}`);
  }
  return { index, count };
}

/** The config value of a shard (`"i/n"`). */
export function shardKey(shard: Shard): string {
  return `${shard.index}/${shard.count}`;
}

/** The folder of a shard inside the run directory. */
export function shardDirName(shard: Shard): string {
  return `shard-${shard.index}-of-${shard.count}`;
}

/** Reads a shard folder name back (null when `name` is not one). */
export function parseShardDirName(name: string): Shard | null {
  const m = /^shard-(\d+)-of-(\d+)$/.exec(name);
  if (!m) return null;
  const shard = { index: Number(m[1]), count: Number(m[2]) };
  return shard.index < shard.count ? shard : null;
}

/** How many rollouts of the task at `position` belong to `shard` (0..R). */
export function shardQuota(position: number, rollouts: number, shard: Shard): number {
  const first = position * rollouts;
  const n = shard.count;
  const r0 = (((shard.index - first) % n) + n) % n;
  return r0 >= rollouts ? 0 : Math.floor((rollouts - 1 - r0) / n) + 1;
}

/** The shard that owns slot `(position, rollout)`. */
export function shardOf(
  position: number,
  rollout: number,
  rollouts: number,
  count: number,
): number {
  return (position * rollouts + rollout) % count;
}

/** The rollout indices of the task at `position` that `shard` owns, in order. */
export function shardRollouts(position: number, rollouts: number, shard: Shard): number[] {
  const out: number[] = [];
  for (let r = 0; r < rollouts; r++) {
    if (shardOf(position, r, rollouts, shard.count) === shard.index) out.push(r);
  }
  return out;
}

/** What a shard owes over the selected tasks: a count per task key, and their total. */
export interface ShardOwed {
  owed: Map<string, number>;
  /** Slots of the shard. */
  slots: number;
  /** Selected tasks (of the whole run). */
  tasks: number;
}

/** Streams the selected tasks once and counts the shard's slots per task key. */
export async function shardOwed(
  view: TasksetView,
  rollouts: number,
  shard: Shard,
): Promise<ShardOwed> {
  const owed = new Map<string, number>();
  let slots = 0;
  let position = 0;
  for await (const task of view) {
    const q = shardQuota(position++, rollouts, shard);
    if (q === 0) continue;
    const key = taskHash(task);
    owed.set(key, (owed.get(key) ?? 0) + q);
    slots += q;
  }
  return { owed, slots, tasks: position };
}
