/**
 * `vf merge <run dir>` and `vf shards status <run dir>`: the shards of a sharded run
 * merged into one run directory, or their progress shown (lib/run/shard_merge.ts).
 *
 * @module
 */
import process from "node:process";
import { join, resolve } from "node:path";
import { InputError } from "../../kit/errors.ts";
import { leaseOf } from "../run/lease.ts";
import { mergeShards, readShardedRun } from "../run/shard_merge.ts";
import type { OwedSlot, ShardsTally } from "../run/shard_tally.ts";
import { err, out } from "./output.ts";

/** The exit code of a merge that left slots owed (without `--allow-partial`). */
export const MERGE_OWED_EXIT = 4;

const MERGE_USAGE = "vf merge <run dir> [-o <dir>] [--allow-partial]";
const STATUS_USAGE = "vf shards status <run dir>";

function usage(message: string, hint: string): InputError {
  return new InputError("usage", message, { hint });
}

/** Every owed slot shown, at most `max` lines. */
function owedLines(slots: OwedSlot[], count: number, max = 50): string[] {
  const lines = slots.slice(0, max).map((s) =>
    `owed: task ${s.position} rollout ${s.rollout} (task key ${s.task_key}) by shard ${s.shard}/${count}`
  );
  if (slots.length > max) lines.push(`... and ${slots.length - max} more (merge.json lists all)`);
  return lines;
}

function table(tally: ShardsTally, withLease: boolean): string {
  const header = ["SHARD", "SLOTS", "DONE", "ERRORED", "OWED", "SURPLUS", "FOREIGN", "TORN"];
  if (withLease) header.push("LEASE");
  const rows = [header];
  for (const s of tally.shards) {
    const row = [
      `${s.index}/${tally.count}`,
      ...[s.slots, s.done, s.errored, s.owed, s.surplus, s.foreign, s.malformed].map(String),
    ];
    if (withLease) {
      const lease = s.dir === null ? null : leaseOf(s.dir);
      row.push(
        s.dir === null
          ? "not started"
          : lease === null
          ? "-"
          : `${lease.live ? "running" : "stale"} ${lease.record.owner}`,
      );
    }
    rows.push(row);
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n");
}

/** Runs `vf merge ...`; returns the exit code. */
export async function mergeCommand(argv: string[]): Promise<number> {
  let runDir: string | undefined;
  let outDir: string | undefined;
  let allowPartial = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--allow-partial") allowPartial = true;
    else if (a === "-o" || a === "--out") {
      outDir = argv[++i];
      if (outDir === undefined) throw usage(`Cannot merge: ${a} needs a directory`, MERGE_USAGE);
    } else if (a.startsWith("-")) throw usage(`Cannot merge: unknown flag "${a}"`, MERGE_USAGE);
    else if (runDir === undefined) runDir = a;
    else throw usage(`Cannot merge: unexpected argument "${a}"`, MERGE_USAGE);
  }
  if (runDir === undefined) throw usage("Cannot merge: give the run directory", MERGE_USAGE);
  const cwd = process.cwd();
  const dir = resolve(cwd, runDir);
  const target = resolve(cwd, outDir ?? join(dir, "merged"));
  const result = await mergeShards(dir, target, cwd);
  const { tally, summary } = result;
  const surplus = tally.shards.reduce((n, s) => n + s.surplus + s.foreign + s.malformed, 0);
  const lines = [
    `merged ${tally.count} shard(s) of ${dir} into ${target}: ${result.lines} episode(s), ` +
    `${summary.counts.errored_episodes} errored`,
  ];
  for (const s of tally.shards) {
    const dropped = s.surplus + s.foreign + s.malformed;
    if (dropped) {
      lines.push(
        `shard ${s.index}/${tally.count}: dropped ${dropped} line(s) (${s.surplus} surplus, ` +
          `${s.foreign} foreign, ${s.malformed} torn or malformed)`,
      );
    }
  }
  if (surplus) lines.push(`dropped ${surplus} line(s) in all`);
  lines.push(...owedLines(tally.owedSlots, tally.count));
  await err(lines.join("\n"));
  await out(target);
  const owed = tally.owedSlots.length;
  if (owed === 0) return 0;
  const finish = `vf eval --resume ${target} runs them here`;
  if (allowPartial) {
    await err(`${owed} slot(s) owed (--allow-partial); ${finish}`);
    return 0;
  }
  await err(
    `error: ${owed} slot(s) owed (exit ${MERGE_OWED_EXIT})\n` +
      `hint: restart the shards that owe them, or ${finish}; --allow-partial accepts a partial merge`,
  );
  return MERGE_OWED_EXIT;
}

/** Runs `vf shards <sub> ...`; returns the exit code. */
export async function shardsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "k8s" || sub === "slurm") {
    const { shardsLaunchCommand } = await import("./shards_launch_command.ts");
    return await shardsLaunchCommand(sub, rest);
  }
  if (sub !== "status") throw usage(`Cannot run \`vf shards ${sub}\``, STATUS_USAGE);
  if (rest.length !== 1 || rest[0]!.startsWith("-")) {
    throw usage("Cannot show shards: give one run directory", STATUS_USAGE);
  }
  const cwd = process.cwd();
  const { tally } = await readShardedRun(resolve(cwd, rest[0]!), cwd);
  await out(table(tally, true));
  const owed = tally.shards.reduce((n, s) => n + s.owed, 0);
  const done = tally.shards.reduce((n, s) => n + s.done, 0);
  await err(`${done} of ${done + owed} slot(s) done, ${owed} owed`);
  return 0;
}
