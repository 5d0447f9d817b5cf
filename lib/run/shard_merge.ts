/**
 * `vf merge`: the shards of a run made into one ordinary run directory — the config
 * without the shard key, the kept lines of every shard in `traces.jsonl` (exactly one per
 * slot a shard covered: see lib/run/shard_tally.ts), `summary.json` over them, and
 * `merge.json`, the report (per shard: kept, surplus, foreign, malformed lines; every
 * owed slot and the shard that owes it). Slots still owed are what `vf eval --resume` on
 * the merged directory runs, on one machine.
 *
 * @module
 */
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { InputError } from "../../kit/errors.ts";
import { getAllEnv } from "../../kit/_runtime/env.ts";
import { tempPathBeside } from "../../kit/util/write_atomic.ts";
import { type LoadedConfig, loadEvalConfig } from "../config/load_config.ts";
import { writeEvalJson, writeOutputAtomic } from "./config_dump.ts";
import { selectionView } from "./run_inputs.ts";
import { type RunState, summaryOf, writeSummary } from "./run_state.ts";
import { type RunSummary, SummaryAccumulator } from "./summary.ts";
import {
  checkSameConfig,
  findShards,
  shardLines,
  type ShardsTally,
  tallyShards,
} from "./shard_tally.ts";

/** A sharded run read back: its config (from a shard) and its tally. */
export interface ShardedRun {
  loaded: LoadedConfig;
  tally: ShardsTally;
}

/** Reads the shards of `runDir` (refusing disagreeing ones) and tallies them. */
export async function readShardedRun(runDir: string, cwd: string): Promise<ShardedRun> {
  const found = findShards(runDir);
  const firstDir = checkSameConfig(found.dirs);
  const loaded = await loadEvalConfig(["--resume", firstDir, "--display", "none"], {
    cwd,
    env: getAllEnv(),
  });
  const view = selectionView(loaded, cwd);
  const tally = await tallyShards(runDir, view, loaded.config.num_rollouts, {
    ...found,
    firstDir,
  });
  return { loaded, tally };
}

/** What {@link mergeShards} wrote. */
export interface MergeResult extends ShardedRun {
  outDir: string;
  lines: number;
  summary: RunSummary;
}

/** The merged directory may be written over only when a merge wrote it and no run since. */
function checkOutDir(outDir: string): void {
  if (!existsSync(join(outDir, "traces.jsonl"))) return;
  if (existsSync(join(outDir, "merge.json")) && !existsSync(join(outDir, "logs"))) return;
  throw new InputError("run_dir_has_results", `Cannot merge into ${outDir}: it holds a run`, {
    hint: "pick another -o <dir>, or remove it (a merged directory finished by --resume " +
      "is never written over)",
  });
}

/** Merges the shards of `runDir` into `outDir` (see the module). */
export async function mergeShards(
  runDir: string,
  outDir: string,
  cwd: string,
): Promise<MergeResult> {
  const started = Date.now();
  checkOutDir(outDir);
  const run = await readShardedRun(runDir, cwd);
  const { tally } = run;
  const config = structuredClone(run.loaded.config);
  config.shard = null;
  config.resume = false;
  const loaded: LoadedConfig = { ...run.loaded, config };
  mkdirSync(outDir, { recursive: true });
  const acc = new SummaryAccumulator();
  const path = join(outDir, "traces.jsonl");
  const tmp = tempPathBeside(path);
  const fd = openSync(tmp, "w");
  const encoder = new TextEncoder();
  let lines = 0;
  try {
    for (const shard of tally.shards) {
      if (shard.dir === null) continue;
      for (const line of shardLines(shard.dir, tally.picks[shard.index]!)) {
        if (line.verdict !== "keep") continue;
        const buf = encoder.encode(line.text + "\n");
        let off = 0;
        while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
        acc.add(line.episode!);
        lines++;
      }
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  writeEvalJson(outDir, config);
  renameSync(tmp, path);
  const state: RunState = {
    started,
    acc,
    expected: tally.shards.reduce((n, s) => n + s.slots, 0),
    owed: null,
    unconfirmed: [],
  };
  const summary = summaryOf(loaded, outDir, state, 1, "completed");
  writeSummary(outDir, summary);
  writeOutputAtomic(
    join(outDir, "merge.json"),
    JSON.stringify(
      {
        run_dir: runDir,
        shards: tally.count,
        per_shard: tally.shards.map(({ dir: _dir, ...s }) => s),
        owed: tally.owedSlots,
      },
      null,
      2,
    ) + "\n",
  );
  return { ...run, loaded, outDir, lines, summary };
}
