/**
 * The state of a sharded run, read from its shard folders: their configs must agree (the
 * shard key aside) and name one shard count; the deal (lib/run/shard.ts) over the run's
 * selection says which slots each shard owes; each shard's `traces.jsonl` is read against
 * its own slots, per task key: up to the shard's quota of lines are kept, ok episodes
 * before errored ones, in file order; past the quota a line is surplus (a zombie process,
 * a double run), and a line of a task key the shard does not own is foreign. What the kept
 * lines leave uncovered is owed, named slot by slot. Lines are streamed twice (count,
 * then pick), so memory holds counters and the owed slots, never the episodes.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { InputError } from "../../kit/errors.ts";
import { pythonJsonDumps, taskHash } from "../../kit/tasks/hash.ts";
import type { TasksetView } from "../../kit/taskset_view.ts";
import type { Episode } from "../../kit/trace/types.ts";
import { type Json, mergeConfig } from "../config/merge.ts";
import { sidecarPath } from "../config/sidecar.ts";
import { parseShardDirName, type Shard, shardDirName, shardOf } from "./shard.ts";
import { readLines } from "./traces_file.ts";

/** A slot a shard still owes. */
export interface OwedSlot {
  shard: number;
  position: number;
  rollout: number;
  task_key: string;
}

/** What one shard holds against what it owes. */
export interface ShardTally {
  index: number;
  /** The shard folder, null when the shard never started. */
  dir: string | null;
  slots: number;
  /** Kept lines: ok, and errored (a slot no ok line covers). */
  done: number;
  errored: number;
  owed: number;
  surplus: number;
  foreign: number;
  /** Torn, malformed or not an episode. */
  malformed: number;
}

/** The tally of a sharded run. */
export interface ShardsTally {
  runDir: string;
  count: number;
  shards: ShardTally[];
  owedSlots: OwedSlot[];
  /** A shard folder (for its config). */
  firstDir: string;
  /** The lines to keep per shard: [key] -> how many ok, then how many errored. */
  picks: Map<string, { ok: number; errored: number }>[];
}

function readJson(path: string): Json {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new InputError("shard_mismatch", `Cannot read ${path}: ${(err as Error).message}`);
  }
}

/** A shard's saved config (eval.json with its sidecar), without the shard and `verbose`. */
export function shardConfig(dir: string): Record<string, unknown> {
  const path = join(dir, "configs", "eval.json");
  if (!existsSync(path)) return {};
  const side = existsSync(sidecarPath(dir)) ? readJson(sidecarPath(dir)) : {};
  const all = mergeConfig(readJson(path), side) as Record<string, unknown>;
  delete all.shard;
  delete all.verbose; // as on a resume, how a launch logs may differ
  return all;
}

/** The shard folders of a run directory; refuses none, and shard counts that disagree. */
export function findShards(runDir: string): { count: number; dirs: Map<number, string> } {
  const found: Shard[] = [];
  for (const name of existsSync(runDir) ? readdirSync(runDir) : []) {
    const shard = parseShardDirName(name);
    if (shard) found.push(shard);
  }
  if (found.length === 0) {
    throw new InputError("shards_missing", `No shard folders (shard-<i>-of-<n>) in ${runDir}`, {
      hint: "give the run directory that vf eval --shard wrote its shard folders into",
    });
  }
  const counts = [...new Set(found.map((s) => s.count))].sort((a, b) => a - b);
  if (counts.length > 1) {
    throw new InputError(
      "shard_mismatch",
      `Cannot merge ${runDir}: its shards disagree on the shard count (${counts.join(", ")})`,
      { hint: "every shard of one run is started with the same --shard <i>/<n>" },
    );
  }
  const count = counts[0]!;
  const dirs = new Map(found.map((s) => [s.index, join(runDir, shardDirName(s))]));
  return { count, dirs };
}

/** Refuses shards whose saved configs differ (the shard key aside), naming the keys. */
export function checkSameConfig(dirs: Map<number, string>): string {
  let first: { index: number; dir: string; config: Record<string, unknown> } | null = null;
  for (const [index, dir] of [...dirs].sort((a, b) => a[0] - b[0])) {
    const config = shardConfig(dir);
    if (Object.keys(config).length === 0) continue; // started, nothing saved yet
    if (first === null) {
      first = { index, dir, config };
      continue;
    }
    const keys = [...new Set([...Object.keys(first.config), ...Object.keys(config)])].filter(
      (k) => pythonJsonDumps(first!.config[k] as Json) !== pythonJsonDumps(config[k] as Json),
    );
    if (keys.length) {
      throw new InputError(
        "shard_mismatch",
        `Cannot merge: the configs of shard ${first.index} and shard ${index} differ in ${
          keys.sort().map((k) => `\`${k}\``).join(", ")
        }`,
        { hint: "every shard of one run is started with the same config and flags" },
      );
    }
  }
  if (first === null) {
    throw new InputError("shards_missing", "No shard has saved its config yet", {
      hint: "start the shards with vf eval --shard <i>/<n>",
    });
  }
  return first.dir;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function episodeOf(text: string): Episode | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(v) || !Array.isArray(v.traces) || v.traces.length === 0) return null;
  return isObject(v.task) && isObject(v.task.data) ? v as unknown as Episode : null;
}

/**
 * Streams a shard's lines with the decision on each: `keep` (ok or errored) or why not.
 * `picks` says how many ok and errored lines of each key to keep.
 */
export function* shardLines(
  dir: string,
  picks: Map<string, { ok: number; errored: number }>,
): Generator<{ text: string; episode: Episode | null; verdict: "keep" | "surplus" | "foreign" }> {
  const path = join(dir, "traces.jsonl");
  if (!existsSync(path)) return;
  const left = new Map([...picks].map(([k, v]) => [k, { ...v }]));
  for (const line of readLines(path)) {
    if (line.text.trim() === "") continue;
    const episode = episodeOf(line.text);
    if (episode === null) {
      yield { text: line.text, episode, verdict: "foreign" };
      continue;
    }
    const pick = left.get(taskHash(episode.task.data));
    const kind = episode.ok === true ? "ok" : "errored";
    if (pick === undefined) yield { text: line.text, episode, verdict: "foreign" };
    else if (pick[kind] > 0) {
      pick[kind]--;
      yield { text: line.text, episode, verdict: "keep" };
    } else yield { text: line.text, episode, verdict: "surplus" };
  }
}

/** Reads every shard of `runDir` against the deal over `selection` (see the module). */
export async function tallyShards(
  runDir: string,
  selection: TasksetView,
  rollouts: number,
  found: { count: number; dirs: Map<number, string>; firstDir: string },
): Promise<ShardsTally> {
  const { count, dirs } = found;
  // the slots of each shard, per task key, in deal order
  const slots = Array.from({ length: count }, () => new Map<string, [number, number][]>());
  let position = 0;
  for await (const task of selection) {
    const key = taskHash(task);
    for (let r = 0; r < rollouts; r++) {
      const own = slots[shardOf(position, r, rollouts, count)]!;
      const list = own.get(key) ?? [];
      if (list.length === 0) own.set(key, list);
      list.push([position, r]);
    }
    position++;
  }
  const shards: ShardTally[] = [];
  const owedSlots: OwedSlot[] = [];
  const picks: Map<string, { ok: number; errored: number }>[] = [];
  for (let index = 0; index < count; index++) {
    const dir = dirs.get(index) ?? null;
    const own = slots[index]!;
    const tally: ShardTally = {
      index,
      dir,
      slots: 0,
      done: 0,
      errored: 0,
      owed: 0,
      surplus: 0,
      foreign: 0,
      malformed: 0,
    };
    const seen = new Map<string, { ok: number; errored: number }>();
    for (const key of own.keys()) seen.set(key, { ok: 0, errored: 0 });
    const path = dir === null ? null : join(dir, "traces.jsonl");
    if (path !== null && existsSync(path)) {
      for (const line of readLines(path)) {
        if (line.text.trim() === "") continue;
        const episode = episodeOf(line.text);
        if (episode === null) {
          tally.malformed++;
          continue;
        }
        const s = seen.get(taskHash(episode.task.data));
        if (s === undefined) tally.foreign++;
        else s[episode.ok === true ? "ok" : "errored"]++;
      }
    }
    const pick = new Map<string, { ok: number; errored: number }>();
    for (const [key, list] of own) {
      const s = seen.get(key)!;
      const ok = Math.min(s.ok, list.length);
      const errored = Math.min(s.errored, list.length - ok);
      pick.set(key, { ok, errored });
      tally.slots += list.length;
      tally.done += ok + errored;
      tally.errored += errored;
      tally.surplus += s.ok + s.errored - ok - errored;
      for (const [p, r] of list.slice(ok + errored)) {
        owedSlots.push({ shard: index, position: p, rollout: r, task_key: key });
      }
    }
    tally.owed = tally.slots - tally.done;
    shards.push(tally);
    picks.push(pick);
  }
  owedSlots.sort((a, b) => a.position - b.position || a.rollout - b.rollout);
  return { runDir, count, shards, owedSlots, firstDir: found.firstDir, picks };
}
