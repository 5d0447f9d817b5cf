/**
 * Benchmark: docker runtime containers started and stopped per second with 16 in flight
 * (each `start()`, one `true` run, `stopConfirmed()`), against `docker run --rm <image> true`
 * in a shell loop on the same image, measured in the same run; prints the ratio. Then the
 * same churn with per-destination rules (an `allow` rule: the bridge network and the rules
 * loaded into each container), against the runtime without them. Needs an engine and the
 * image (scripts/ci_docker.sh builds `verifiers-ts-test:busybox`).
 *
 *   deno run -A bench/docker_churn.ts [containers=48] [image=verifiers-ts-test:busybox]
 *   bun bench/docker_churn.ts [containers=48] [image=verifiers-ts-test:busybox]
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { getArgs } from "../kit/_runtime/args.ts";
import docker from "../plugins/runtimes/docker/mod.ts";
import { loadAverages } from "./common.ts";

const [nArg, imageArg] = getArgs();
const N = Number(nArg ?? 48);
const IMAGE = imageArg ?? "verifiers-ts-test:busybox";
const IN_FLIGHT = 16;

const cache = mkdtempSync(join(tmpdir(), "vf-bench-docker-"));
process.env.VF_CACHE_DIR = cache;

/** Containers per second of `docker run --rm IMAGE true`, N times in a shell loop. */
function shellLoopRate(): number {
  const t0 = performance.now();
  const r = spawnSync("sh", [
    "-c",
    `i=0; while [ "$i" -lt "$1" ]; do docker run --rm --network none "$2" true || exit 1; i=$((i+1)); done`,
    "loop",
    String(N),
    IMAGE,
  ], { stdio: ["ignore", "ignore", "inherit"] });
  if (r.status !== 0) throw new Error("the docker run loop failed");
  return N / ((performance.now() - t0) / 1000);
}

/** Containers per second of the runtime: start, `true`, confirmed stop; IN_FLIGHT at once. */
async function runtimeRate(policy: Record<string, unknown>): Promise<number> {
  let next = 0;
  let failed = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < N) {
      next++;
      const rt = docker.create({ image: IMAGE, ...policy }, { name: `bench-${next}` });
      try {
        await rt.start();
        if ((await rt.run(["true"])).exitCode !== 0) failed++;
      } catch {
        failed++;
      } finally {
        await rt.stopConfirmed().catch(() => failed++);
      }
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  if (failed) throw new Error(`${failed} containers failed`);
  return N / ((performance.now() - t0) / 1000);
}

try {
  const row = (k: string, v: string) => console.log(`${k.padEnd(48)} ${v}`);
  console.log(`docker: ${N} containers of ${IMAGE} (${loadAverages()})\n`);
  const loop = shellLoopRate();
  const ours = await runtimeRate({ block: ["*"] });
  // a documentation address (RFC 5737): nothing is sent, the rules are loaded all the same
  const ruled = await runtimeRate({ allow: ["192.0.2.1:443"] });
  row("`docker run --rm` shell loop", `${loop.toFixed(2)} containers/s`);
  row(`docker runtime, ${IN_FLIGHT} in flight`, `${ours.toFixed(2)} containers/s`);
  row("ratio (runtime / loop)", `${(ours / loop).toFixed(2)}x`);
  row(`... with an allow rule, ${IN_FLIGHT} in flight`, `${ruled.toFixed(2)} containers/s`);
  row("ratio (with rules / without)", `${(ruled / ours).toFixed(2)}x`);
} finally {
  rmSync(cache, { recursive: true, force: true });
}
