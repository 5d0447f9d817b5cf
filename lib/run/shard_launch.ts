/**
 * Launch files for the schedulers users already have, made from a config: a Kubernetes
 * `batch/v1` Indexed Job (with the config in a ConfigMap and a merge Job created suspended)
 * and a Slurm `sbatch --array` submission with a dependent merge step. Every shard runs
 * `vf eval @ <config> --run.name <name> --shard auto/<n>`; secrets are named, never read:
 * the pods take each variable from a Kubernetes Secret by key, Slurm jobs inherit the
 * submitting shell's environment.
 *
 * @module
 */
import { basename } from "node:path";

/** What both launchers need. */
export interface LaunchSpec {
  /** The run name every shard writes under (also the Job's name, a DNS label). */
  name: string;
  /** The config file's text (Kubernetes: into a ConfigMap) and its path (Slurm). */
  configText: string;
  configPath: string;
  shards: number;
  parallelism: number;
  /** Environment variables the run needs that hold secrets (names only). */
  secretEnv: string[];
}

/** Kubernetes-only settings. */
export interface K8sSpec extends LaunchSpec {
  image: string;
  /** The Secret holding `secretEnv`, by key. */
  secretName: string;
  /** The PersistentVolumeClaim every shard and the merge write outputs to. */
  outputsClaim: string;
  /** Failed pods tolerated per index before the index fails. */
  backoffPerIndex: number;
  /** Seconds a stopped pod gets to confirm its sandboxes are gone. */
  gracePeriodS: number;
}

/** A DNS-1123 label of at most `max` characters made from `text`. */
export function dnsLabel(text: string, max = 52): string {
  const label = text.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+/, "").slice(0, max)
    .replace(/-+$/, "");
  return label === "" ? "vf-run" : label;
}

const OUTPUTS = "/outputs";
const CONFIG_DIR = "/config";

function container(spec: K8sSpec, args: string[]) {
  return {
    name: "vf",
    image: spec.image,
    command: ["vf"],
    args,
    env: spec.secretEnv.map((name) => ({
      name,
      valueFrom: { secretKeyRef: { name: spec.secretName, key: name } },
    })),
    volumeMounts: [
      { name: "config", mountPath: CONFIG_DIR, readOnly: true },
      { name: "outputs", mountPath: OUTPUTS },
    ],
  };
}

function volumes(spec: K8sSpec, configMap: string) {
  return [
    { name: "config", configMap: { name: configMap } },
    { name: "outputs", persistentVolumeClaim: { claimName: spec.outputsClaim } },
  ];
}

/**
 * The Kubernetes objects: the ConfigMap, the Indexed Job of the shards and the merge Job
 * (suspended: resumed once the shards' Job completed).
 */
export function k8sObjects(spec: K8sSpec): Record<string, unknown>[] {
  const configMap = `${spec.name}-config`;
  const configFile = basename(spec.configPath).replace(/[^A-Za-z0-9._-]/g, "_") || "eval.toml";
  const labels = { "app.kubernetes.io/name": "verifiers-ts", "verifiers-ts/run": spec.name };
  const shardArgs = [
    "eval",
    "@",
    `${CONFIG_DIR}/${configFile}`,
    "--run.name",
    spec.name,
    "--output-dir",
    OUTPUTS,
    "--shard",
    `auto/${spec.shards}`,
    "--display",
    "plain",
  ];
  return [
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: configMap, labels },
      data: { [configFile]: spec.configText },
    },
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: spec.name, labels },
      spec: {
        completionMode: "Indexed",
        completions: spec.shards,
        parallelism: Math.min(spec.parallelism, spec.shards),
        backoffLimitPerIndex: spec.backoffPerIndex,
        // a replacement pod starts only once the old one is gone: never two on one index
        podReplacementPolicy: "Failed",
        podFailurePolicy: {
          rules: [
            // exit 2 is bad input: every index would fail the same way
            {
              action: "FailJob",
              onExitCodes: { containerName: "vf", operator: "In", values: [2] },
            },
            // an evicted or preempted pod is not the run's fault: not counted
            { action: "Ignore", onPodConditions: [{ type: "DisruptionTarget", status: "True" }] },
          ],
        },
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: "Never",
            terminationGracePeriodSeconds: spec.gracePeriodS,
            containers: [container(spec, shardArgs)],
            volumes: volumes(spec, configMap),
          },
        },
      },
    },
    {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: `${spec.name}-merge`, labels },
      spec: {
        suspend: true,
        completions: 1,
        backoffLimit: 2,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: "Never",
            containers: [
              { ...container(spec, ["merge", `${OUTPUTS}/${spec.name}`]), env: [] },
            ],
            volumes: volumes(spec, configMap),
          },
        },
      },
    },
  ];
}

/** The Kubernetes objects as a YAML stream (one JSON document each), with how to use it. */
export function k8sManifest(spec: K8sSpec): string {
  const head = [
    `# verifiers-ts: ${spec.shards} shards of run "${spec.name}", ${spec.parallelism} at once.`,
    `# The pods read ${
      spec.secretEnv.length ? spec.secretEnv.join(", ") : "no secret"
    } from Secret "${spec.secretName}" and write to PVC "${spec.outputsClaim}":`,
    `#   kubectl create secret generic ${spec.secretName} ${
      spec.secretEnv.map((v) => `--from-literal=${v}=...`).join(" ")
    }`,
    "#   kubectl apply -f <this file>",
    `#   kubectl wait --for=condition=complete job/${spec.name} --timeout=24h`,
    `#   kubectl patch job ${spec.name}-merge --type=merge -p '{"spec":{"suspend":false}}'`,
  ];
  return [...head, ...k8sObjects(spec).flatMap((o) => ["---", JSON.stringify(o, null, 2)])]
    .join("\n") + "\n";
}

/** Quotes a word for a POSIX shell. */
function shq(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'"'"'`)}'`;
}

/** A Slurm submission: the shard array (at most `parallelism` at once) and a merge after it. */
export function slurmScript(spec: LaunchSpec & { outputDir: string }): string {
  const shard = [
    "vf",
    "eval",
    "@",
    spec.configPath,
    "--run.name",
    spec.name,
    "--output-dir",
    spec.outputDir,
    "--shard",
    `auto/${spec.shards}`,
    "--display",
    "plain",
  ].map(shq).join(" ");
  const merge = ["vf", "merge", `${spec.outputDir}/${spec.name}`].map(shq).join(" ");
  const para = Math.min(spec.parallelism, spec.shards);
  return [
    "#!/bin/bash",
    `# verifiers-ts: ${spec.shards} shards of run "${spec.name}" as a Slurm array, ${para} at once,`,
    "# then a merge once every array task ended. Run it from the directory the config's",
    "# relative paths start in, on a file system every node shares. The jobs inherit this",
    `# shell's environment${
      spec.secretEnv.length ? ` (export ${spec.secretEnv.join(", ")} first)` : ""
    }; sbatch options (partition, time) go in SBATCH_* variables or below.`,
    "set -euo pipefail",
    `array=$(sbatch --parsable --job-name=${shq(spec.name)} --array=0-${
      spec.shards - 1
    }%${para} \\`,
    `  --requeue --output=${shq(`${spec.name}-%A_%a.log`)} --wrap=${shq(shard)})`,
    `sbatch --parsable --job-name=${shq(`${spec.name}-merge`)} --dependency=afterany:"$array" \\`,
    `  --output=${shq(`${spec.name}-merge-%j.log`)} --wrap=${shq(merge)}`,
    "",
  ].join("\n");
}
