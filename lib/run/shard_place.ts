/**
 * Where a sharded launch runs: the shard resolved (`auto` from the scheduler's index
 * variable), its directory under the run directory every shard of the config shares, and
 * the launch made a resume when that directory already holds the shard's run (a scheduler
 * restarting a failed pod or array task reruns the same command). Its sandbox ledger is
 * kept beside its results.
 *
 * @module
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { EvalConfig } from "../config/eval_config.ts";
import { useLedgerDir } from "../../kit/runtime/ledger.ts";
import { refuseIfLeased } from "./lease.ts";
import { resolveShardRunDir } from "./naming.ts";
import { parseShard, type Shard, shardKey } from "./shard.ts";

/** A placed shard. */
export interface PlacedShard {
  shard: Shard;
  runDir: string;
}

/**
 * Places a sharded launch (null when the config has no shard). `resumeDir` is the run
 * directory a `--resume <dir>` named, if any. Mutates `config` (shard resolved, run name,
 * `resume` set when the shard's run exists; with `--clean` the shard's folder is removed).
 */
export function placeShard(
  config: EvalConfig,
  cwd: string,
  env: (name: string) => string | undefined,
  resumeDir: string | undefined,
): PlacedShard | null {
  if (config.shard === null) return null;
  const shard = parseShard(config.shard, env);
  config.shard = shardKey(shard);
  const runDir = resumeDir ?? resolveShardRunDir(config, cwd, shard);
  if (config.clean && resumeDir === undefined) {
    // cleaned here, before the lease is taken in it (a later clean would delete the lease)
    refuseIfLeased(runDir);
    rmSync(runDir, { recursive: true, force: true });
    config.clean = false;
  } else if (existsSync(join(runDir, "configs", "eval.json"))) config.resume = true;
  useLedgerDir(join(runDir, "sandboxes"));
  return { shard, runDir };
}
