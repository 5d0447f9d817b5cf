/**
 * What the model relay costs a rollout whose program never calls the model, on docker with
 * no network (`block = ["*"]`): the wall time of opening and closing a relay, against one
 * `docker exec` of `true` (the baseline, what any command of the rollout costs), measured
 * in the same container. Two images: one with a JavaScript runtime on its PATH (the relay
 * runs there) and the busybox test image (the relay runs on this host's runtime, copied in
 * once per container: the first relay pays the copy, later ones find it).
 *
 * `scripts/ci_docker.sh deno run -A bench/relay_start.ts [--rounds 5]` (needs the docker
 * test images: tests/_docker.ts, tests/_relay_image.ts)
 *
 * @module
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import process from "node:process";
import { openRelay } from "../kit/relay/host.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import docker from "../plugins/runtimes/docker/mod.ts";
import { dockerSkipReason, TEST_IMAGE } from "../tests/_docker.ts";
import { buildRelayImage } from "../tests/_relay_image.ts";
import { loadAverages, median } from "./common.ts";

const at = process.argv.indexOf("--rounds");
const ROUNDS = at >= 0 ? Number(process.argv[at + 1]) : 5;

const skip = dockerSkipReason();
if (skip) {
  console.log(`relay start bench: skipped: ${skip}`);
  process.exit(0);
}
const server = createServer((_req, res) => res.end("{}"));
await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

/** Median ms of an exec, of the first relay and of later relays, in one container of `image`. */
async function measure(image: string): Promise<{ exec: number; first: number; later: number }> {
  const rt: Runtime = docker.create(
    { image, workdir: "/work", block: ["*"] },
    { name: "bench", run: `relay-start-${process.pid}` },
  );
  await rt.start();
  try {
    const open = async () => await (await openRelay(rt, url)).close();
    const first = await timed(open);
    const exec: number[] = [];
    const later: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      exec.push(await timed(() => rt.run(["true"])));
      later.push(await timed(open));
    }
    return { exec: median(exec), first, later: median(later) };
  } finally {
    await rt.stop();
  }
}

const withRuntime = buildRelayImage();
try {
  console.log(`relay start bench: docker, no network, ${ROUNDS} rounds`);
  for (const [name, image] of [["bun in the image", withRuntime.tag], ["busybox", TEST_IMAGE]]) {
    const m = await measure(image!);
    console.log(
      `  ${name}: exec ${m.exec.toFixed(0)} ms; first relay ${m.first.toFixed(0)} ms ` +
        `(${(m.first / m.exec).toFixed(1)}x); later relays ${m.later.toFixed(0)} ms ` +
        `(${(m.later / m.exec).toFixed(2)}x)`,
    );
  }
  console.log(`  ${loadAverages()}`);
} finally {
  withRuntime.remove();
  server.close();
}
process.exit(0);
