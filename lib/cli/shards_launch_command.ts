/**
 * `vf shards k8s @ cfg.toml --shards <n> ...` and `vf shards slurm @ cfg.toml ...` (also
 * `vf shards k8s --slurm`): print the launch files of a sharded run (lib/run/shard_launch.ts)
 * after checking the config as `vf validate-config` does. Nothing is sent anywhere.
 *
 * @module
 */
import process from "node:process";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { InputError } from "../../kit/errors.ts";
import { getAllEnv } from "../../kit/_runtime/env.ts";
import { loadEvalConfig } from "../config/load_config.ts";
import { sharedRunName } from "../run/naming.ts";
import { dnsLabel, k8sManifest, slurmScript } from "../run/shard_launch.ts";
import { out } from "./output.ts";

export const LAUNCH_USAGE =
  "vf shards k8s|slurm @ <config.toml> --shards <n> [--parallelism <p>] " +
  "[--name <run>] [--secret-env <VAR> ...] [k8s: --image <ref> --pvc <claim> --secret <name> " +
  "--backoff-per-index <k> --grace-period <s>] [slurm: --output-dir <dir>]";

const VALUE_FLAGS = [
  "--shards",
  "--parallelism",
  "--name",
  "--secret-env",
  "--image",
  "--pvc",
  "--secret",
  "--backoff-per-index",
  "--grace-period",
  "--output-dir",
] as const;

function bad(message: string): InputError {
  return new InputError("usage", `Cannot print the launch files: ${message}`, {
    hint: LAUNCH_USAGE,
  });
}

function positive(flag: string, value: string | undefined, min = 1): number {
  const n = Number(value);
  if (value === undefined || !Number.isInteger(n) || n < min) {
    throw bad(`${flag} needs an integer >= ${min}${value === undefined ? "" : `, not "${value}"`}`);
  }
  return n;
}

/** Runs `vf shards k8s|slurm ...`; returns the exit code. */
export async function shardsLaunchCommand(kind: "k8s" | "slurm", argv: string[]): Promise<number> {
  let config: string | undefined;
  const values = new Map<string, string[]>();
  let slurm = kind === "slurm";
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "@") {
      config = argv[++i];
      if (config === undefined) throw bad("@ needs a config file");
    } else if (a === "--slurm") slurm = true;
    else if ((VALUE_FLAGS as readonly string[]).includes(a)) {
      const v = argv[++i];
      if (v === undefined) throw bad(`${a} needs a value`);
      values.set(a, [...(values.get(a) ?? []), v]);
    } else throw bad(`unexpected argument "${a}"`);
  }
  if (config === undefined) throw bad("give the config with @ <config.toml>");
  const one = (flag: string) => values.get(flag)?.at(-1);
  const shards = positive("--shards", one("--shards"));
  const parallelism = one("--parallelism") === undefined
    ? shards
    : positive("--parallelism", one("--parallelism"));
  const cwd = process.cwd();
  const loaded = await loadEvalConfig(["@", config], { cwd, validateOnly: true, env: getAllEnv() });
  const c = loaded.config;
  const name = dnsLabel(one("--name") ?? c.run.name ?? sharedRunName(c));
  const secretEnv = [
    ...new Set([
      ...(c.model === "oracle" ? [] : [c.client.api_key_var]),
      ...c.env.taskset.task.judges.flatMap((j) => j.api_key_var ? [j.api_key_var] : []),
      ...(values.get("--secret-env") ?? []),
    ]),
  ];
  for (const v of secretEnv) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(v)) {
      throw bad(`"${v}" is not an environment variable name (--secret-env)`);
    }
  }
  const base = {
    name,
    configText: readFileSync(resolve(cwd, config), "utf8"),
    configPath: config,
    shards,
    parallelism,
    secretEnv,
  };
  if (slurm) {
    await out(slurmScript({ ...base, outputDir: one("--output-dir") ?? c.output_dir }));
    return 0;
  }
  await out(k8sManifest({
    ...base,
    image: one("--image") ?? "verifiers-ts:latest",
    secretName: dnsLabel(one("--secret") ?? `${name}-secrets`, 63),
    outputsClaim: dnsLabel(one("--pvc") ?? "vf-outputs", 63),
    backoffPerIndex: one("--backoff-per-index") === undefined
      ? 3
      : positive("--backoff-per-index", one("--backoff-per-index"), 0),
    gracePeriodS: one("--grace-period") === undefined
      ? 900
      : positive("--grace-period", one("--grace-period")),
  }));
  return 0;
}
