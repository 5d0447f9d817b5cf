/**
 * The Docker engine of the docker runtime's tests: whether one answers (else the reason the
 * tests skip), and the test image (tests/fixtures/docker/Dockerfile), built here from
 * Debian's busybox-static and bash-static when missing: nothing is pulled.
 *
 * @module
 */
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

/** The test image's tag (`scripts/ci_docker.sh` builds the same). */
export const TEST_IMAGE = process.env.VF_DOCKER_TEST_IMAGE || "verifiers-ts-test:busybox";

function docker(args: string[]): { status: number; out: string; err: string } {
  const r = spawnSync("docker", args, { encoding: "utf8", timeout: 120_000 });
  return { status: r.status ?? 127, out: r.stdout ?? "", err: (r.stderr ?? "").trim() };
}

/** Why the docker tests cannot run here, or null when the engine answers and the image exists. */
function probe(): string | null {
  const info = docker(["version", "--format", "{{.Server.Version}}"]);
  if (info.status !== 0) {
    return `no Docker engine answers (${info.err.split("\n")[0] || "docker not installed"}); ` +
      "scripts/ci_docker.sh starts one";
  }
  if (docker(["image", "inspect", TEST_IMAGE]).status === 0) return null;
  const busybox = "/bin/busybox";
  const bash = ["/bin/bash-static", "/usr/bin/bash-static"].find((p) => existsSync(p));
  if (!existsSync(busybox) || !bash) {
    return `test image ${TEST_IMAGE} is missing and busybox-static/bash-static are not installed`;
  }
  const ctx = mkdtempSync(join(tmpdir(), "vf-docker-image-"));
  try {
    copyFileSync(busybox, join(ctx, "busybox"));
    copyFileSync(bash, join(ctx, "bash"));
    copyFileSync(new URL("./fixtures/docker/Dockerfile", import.meta.url), join(ctx, "Dockerfile"));
    const built = docker(["build", "-q", "-t", TEST_IMAGE, ctx]);
    return built.status === 0 ? null : `cannot build ${TEST_IMAGE}: ${built.err}`;
  } finally {
    rmSync(ctx, { recursive: true, force: true });
  }
}

let cached: string | null | undefined;

/** Why the docker tests skip (printed once by the caller), or null when they can run. */
export function dockerSkipReason(): string | null {
  if (cached === undefined) cached = probe();
  return cached;
}

/** Ids of the containers carrying `label` (`key=value`), stopped ones included. */
export function containersLabelled(label: string): string[] {
  const r = docker(["ps", "--all", "--quiet", "--no-trunc", "--filter", `label=${label}`]);
  return r.out.split("\n").map((s) => s.trim()).filter(Boolean);
}

/**
 * Ids of the docker runtime's containers (label `io.verifiers-ts.sandbox=1`) whose run label
 * (`io.verifiers-ts.run`, the run directory) lies under `dir`: a test's own runs.
 */
export function containersOfRunsUnder(dir: string): string[] {
  const ids = containersLabelled("io.verifiers-ts.sandbox=1");
  if (ids.length === 0) return [];
  const r = docker([
    "inspect",
    "--type",
    "container",
    "--format",
    '{{.Id}} {{index .Config.Labels "io.verifiers-ts.run"}}',
    ...ids,
  ]);
  return r.out.split("\n").filter(Boolean).map((l) => l.split(" ") as [string, string])
    .filter(([, run]) => run?.startsWith(dir)).map(([id]) => id);
}

/** Removes containers by id (test cleanup). */
export function removeContainers(ids: string[]): void {
  if (ids.length) docker(["rm", "--force", ...ids]);
}

/** `[id, name]` of each container among `ids` that still exists. */
export function containerNames(ids: string[]): [string, string][] {
  if (ids.length === 0) return [];
  const r = docker(["inspect", "--type", "container", "--format", "{{.Id}} {{.Name}}", ...ids]);
  return r.out.split("\n").filter(Boolean).map((l) => {
    const [id, name] = l.split(" ") as [string, string];
    return [id, name.replace(/^\//, "")];
  });
}

/** Starts a container of the test image that sleeps (no label, no network); returns its id. */
export function startPlainContainer(name: string): string {
  const r = docker([
    "run",
    "--detach",
    "--rm",
    "--network",
    "none",
    "--name",
    name,
    "--entrypoint",
    "sleep",
    TEST_IMAGE,
    "120",
  ]);
  if (r.status !== 0) throw new Error(`docker run failed: ${r.err}`);
  return r.out.trim();
}

/** Builds `tag` from the Dockerfile in `dir` (its FROM must be on this machine). */
export function buildImage(tag: string, dir: string): void {
  const r = docker(["build", "-q", "-t", tag, dir]);
  if (r.status !== 0) throw new Error(`docker build failed: ${r.err}`);
}

/** Removes an image the test built. */
export function removeImage(tag: string): void {
  docker(["rmi", "--force", tag]);
}
