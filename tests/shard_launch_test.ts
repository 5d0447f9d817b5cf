/**
 * The launch files of a sharded run: the printed Kubernetes objects pass the Kubernetes
 * OpenAPI schema (the validators of the kubernetes-models package, generated from it; no
 * API server runs here) and name no secret value; the Slurm submission runs against an
 * `sbatch` stand-in that records what it was asked.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Job } from "kubernetes-models/batch/v1/Job";
import { runCli } from "./_cli.ts";
import { tmp } from "./_run.ts";

const SECRET = "sk-launch-secret-value-123";
const CONFIG = 'model = "gpt-4.1-mini"\n[env.taskset]\nid = "reverse-text"\n' +
  '[client]\napi_key_var = "VF_LAUNCH_KEY"\n';

/** A parsed object, read by path in the assertions. */
// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

function documents(text: string): Obj[] {
  return text.split("\n---\n").slice(1).map((d) => JSON.parse(d));
}

function validate(o: Record<string, unknown>): void {
  if (o.kind === "ConfigMap") new ConfigMap(o).validate();
  else if (o.kind === "Job") new Job(o).validate();
  else assert.fail(`unexpected kind ${o.kind}`);
}

describe("vf shards k8s", () => {
  it("prints an Indexed Job, its merge Job and the config, valid Kubernetes objects", async () => {
    const cwd = tmp("vf-launch-");
    writeFileSync(join(cwd, "cfg.toml"), CONFIG);
    const r = await runCli(
      [
        "shards",
        "k8s",
        "@",
        "cfg.toml",
        "--shards",
        "64",
        "--parallelism",
        "8",
        "--name",
        "Nightly_Eval",
        "--secret-env",
        "PRIME_API_KEY",
      ],
      { cwd, env: { VF_LAUNCH_KEY: SECRET, PRIME_API_KEY: SECRET }, timeoutMs: 60_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, new RegExp(SECRET), "no secret value printed");
    const docs = documents(r.stdout);
    assert.deepEqual(docs.map((d) => d.kind), ["ConfigMap", "Job", "Job"]);
    for (const d of docs) validate(d);
    const job = docs[1]!;
    assert.equal(job.metadata.name, "nightly-eval");
    const s = job.spec;
    assert.equal(s.completionMode, "Indexed");
    assert.equal(s.completions, 64);
    assert.equal(s.parallelism, 8);
    assert.equal(s.podReplacementPolicy, "Failed");
    assert.ok(s.backoffLimitPerIndex >= 1);
    assert.deepEqual(s.podFailurePolicy.rules.map((x: { action: string }) => x.action), [
      "FailJob",
      "Ignore",
    ]);
    assert.deepEqual(s.podFailurePolicy.rules[0].onExitCodes.values, [2]);
    assert.equal(s.podFailurePolicy.rules[1].onPodConditions[0].type, "DisruptionTarget");
    const pod = s.template.spec;
    assert.equal(pod.restartPolicy, "Never", "a pod failure policy needs restartPolicy Never");
    assert.ok(pod.terminationGracePeriodSeconds >= 600);
    const c = pod.containers[0];
    assert.deepEqual(c.args.slice(-4, -2), ["--shard", "auto/64"]);
    assert.deepEqual(
      c.env.map((e: { name: string; valueFrom: { secretKeyRef: { key: string } } }) => [
        e.name,
        e.valueFrom.secretKeyRef.key,
      ]),
      [["VF_LAUNCH_KEY", "VF_LAUNCH_KEY"], ["PRIME_API_KEY", "PRIME_API_KEY"]],
    );
    const merge = docs[2]!;
    assert.equal(merge.spec.suspend, true);
    assert.deepEqual(merge.spec.template.spec.containers[0].args, [
      "merge",
      "/outputs/nightly-eval",
    ]);
    const data = (docs[0] as { data: Record<string, string> }).data;
    assert.equal(data["cfg.toml"], CONFIG);
    // the schema check is live: a wrong type is refused
    const broken = structuredClone(docs[1]!) as { spec: Record<string, unknown> };
    broken.spec.completions = "64";
    assert.throws(() => validate(broken), /completions/);
  });

  it("refuses a bad config or flag with exit 2 before printing anything", async () => {
    const cwd = tmp("vf-launch-");
    writeFileSync(join(cwd, "cfg.toml"), CONFIG + "num_rollouts = 0\n");
    const bad = await runCli(["shards", "k8s", "@", "cfg.toml", "--shards", "4"], {
      cwd,
      timeoutMs: 60_000,
    });
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, "");
    assert.match(bad.stderr, /num_rollouts/);
    writeFileSync(join(cwd, "cfg.toml"), CONFIG);
    const noShards = await runCli(["shards", "k8s", "@", "cfg.toml"], { cwd, timeoutMs: 60_000 });
    assert.equal(noShards.code, 2);
    assert.match(noShards.stderr, /--shards/);
  });
});

describe("vf shards slurm", () => {
  it("submits the shard array with a limit and a merge that depends on it", async () => {
    const cwd = tmp("vf-slurm-");
    writeFileSync(join(cwd, "cfg.toml"), CONFIG);
    const r = await runCli(
      ["shards", "k8s", "--slurm", "@", "cfg.toml", "--shards", "16", "--parallelism", "4"],
      { cwd, env: { VF_LAUNCH_KEY: SECRET }, timeoutMs: 60_000 },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, new RegExp(SECRET));
    writeFileSync(join(cwd, "submit.sh"), r.stdout);
    // an sbatch stand-in: records its argv, one line per call, and answers a job id
    const bin = join(cwd, "bin");
    spawnSync("mkdir", [bin]);
    const log = join(cwd, "sbatch.log");
    writeFileSync(
      join(bin, "sbatch"),
      `#!/bin/sh\nfor a in "$@"; do printf '%s\\t' "$a" >> ${log}; done\necho >> ${log}\n` +
        `echo 4242\n`,
    );
    chmodSync(join(bin, "sbatch"), 0o755);
    const ran = spawnSync("bash", ["submit.sh"], {
      cwd,
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
      encoding: "utf8",
    });
    assert.equal(ran.status, 0, ran.stderr);
    const calls = readFileSync(log, "utf8").trim().split("\n").map((l) => l.split("\t"));
    assert.equal(calls.length, 2);
    assert.ok(calls[0]!.includes("--array=0-15%4"), calls[0]!.join(" "));
    const wrap = calls[0]!.find((a) => a.startsWith("--wrap="))!;
    assert.match(wrap, /vf eval @ cfg\.toml --run\.name \S+ --output-dir outputs --shard auto\/16/);
    assert.ok(calls[1]!.includes("--dependency=afterany:4242"), calls[1]!.join(" "));
    assert.match(calls[1]!.find((a) => a.startsWith("--wrap="))!, /^--wrap=vf merge outputs\//);
  });
});
