/**
 * The docker runtime against the real engine: the runtime conformance suite, the labels,
 * ledger and confirmed teardown, a missing image, limits read from inside the container,
 * and `block = ["*"]`. Skips with one line when no engine can be reached.
 */
import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { runtimeConformance } from "./conformance/runtime_conformance.ts";
import { ConfigError, SandboxError } from "../kit/errors.ts";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import docker, {
  DockerRuntime,
  MANAGED_LABEL,
  networkRuleMatches,
  normalizePolicy,
  RUN_LABEL,
} from "../plugins/runtimes/docker/mod.ts";
import {
  buildImage,
  containerNames,
  containersLabelled,
  dockerSkipReason,
  removeContainers,
  removeImage,
  startPlainContainer,
  TEST_IMAGE,
} from "./_docker.ts";
import { useOwnCacheDir } from "./_cache_dir.ts";

const skip = dockerSkipReason();
if (skip) console.warn(`runtime_docker_test: SKIPPED: ${skip}`);

useOwnCacheDir("vf-docker-test-cache-");
const RUN = `docker-test-${process.pid}`;
const made: Runtime[] = [];
let seq = 0;

function makeDocker(config: Record<string, unknown> = {}): Runtime {
  const rt = docker.create(
    { image: TEST_IMAGE, workdir: "/work", block: ["*"], ...config },
    { name: `t${++seq}`, run: RUN },
  );
  made.push(rt);
  return rt;
}

after(async () => {
  for (const rt of made) await rt.stop();
  if (!skip) removeContainers(containersLabelled(`${RUN_LABEL}=${RUN}`));
});

if (!skip) runtimeConformance("docker runtime", () => makeDocker());

describe("docker runtime plugin and config", () => {
  it("has Python's keys and defaults", () => {
    assert.equal(docker.id, "docker");
    assert.deepEqual(docker.config.parse({}), {
      image: "python:3.11-slim",
      workdir: "/app",
      cpu: null,
      memory: null,
      gpu: null,
      disk: null,
      allow: ["*"],
      block: [],
    });
  });

  it("refuses concrete allow and block together, and rules it cannot enforce", () => {
    assert.throws(
      () => docker.create({ allow: ["a.com"], block: ["b.com"] }, { name: "x" }),
      (e: unknown) => e instanceof ConfigError && /mutually exclusive/.test(e.message),
    );
    assert.throws(
      () => docker.create({ allow: ["*.example.com"] }, { name: "x" }),
      (e: unknown) => e instanceof ConfigError && /host glob/.test(e.message),
    );
    assert.throws(
      () => docker.create({ gpu: "A100:x" }, { name: "x" }),
      (e: unknown) => e instanceof ConfigError && /gpu/.test(e.message),
    );
  });
});

describe("docker network rules", () => {
  it("networkRuleMatches() answers as Python's network_rule_matches", () => {
    // each row's answer is what verifiers/v1/configs/runtime.py@a60a606 gives under Python 3.11
    const rows: [string, string, string, number, boolean][] = [
      ["*", "https", "api.openai.com", 443, true],
      ["api.openai.com", "https", "api.openai.com", 443, true],
      ["API.OpenAI.com.", "http", "api.openai.com", 80, true],
      ["*.example.com", "https", "example.com", 443, true],
      ["*.example.com", "https", "a.b.example.com", 443, true],
      ["*.example.com", "https", "badexample.com", 443, false],
      ["https://example.com", "https", "example.com", 443, true],
      ["https://example.com", "http", "example.com", 80, false],
      ["https://example.com", "https", "example.com", 8443, false],
      ["https://example.com:8443/path/", "https", "example.com", 8443, true],
      ["example.com:8080", "http", "example.com", 8080, true],
      ["example.com:8080", "http", "example.com", 80, false],
      ["http://127.0.0.1:4000", "http", "127.0.0.1", 4000, true],
      ["ex?mple.com", "https", "example.com", 443, false],
      ["[ab]pi.com", "https", "api.com", 443, false],
      ["example.com:notaport", "https", "example.com", 443, false],
      ["", "https", "example.com", 443, false],
    ];
    for (const [rule, scheme, host, port, expected] of rows) {
      assert.equal(networkRuleMatches(rule, scheme, host, port), expected, rule);
    }
  });

  it("normalizePolicy() makes empty allow and a * block framework-only, as Python", () => {
    const framework = { ok: true, policy: { allow: [], block: ["*"] } };
    assert.deepEqual(normalizePolicy([], []), framework);
    assert.deepEqual(normalizePolicy(["a.com"], ["*"]), framework);
    assert.deepEqual(normalizePolicy(["*"], ["b.com"]), {
      ok: true,
      policy: { allow: ["*"], block: ["b.com"] },
    });
    assert.equal(normalizePolicy(["a.com"], ["b.com"]).ok, false);
  });
});

describe("docker runtime against the engine", { skip: skip ?? false }, () => {
  it("labels the container, journals it, and confirms its removal", async () => {
    const rt = makeDocker();
    await rt.start();
    const id = rt.info.id!;
    assert.match(id, /^[0-9a-f]{64}$/);
    assert.ok(containersLabelled(`${MANAGED_LABEL}=1`).includes(id));
    assert.ok(containersLabelled(`${RUN_LABEL}=${RUN}`).includes(id));
    assert.ok(listSandboxes().some((e) => e.provider === "docker" && e.id === id));
    await rt.stopConfirmed();
    assert.equal(rt.stopped, true);
    assert.ok(!containersLabelled(`${MANAGED_LABEL}=1`).includes(id));
    assert.ok(!listSandboxes().some((e) => e.id === id));
    await rt.stopConfirmed(); // idempotent once confirmed
  });

  it("counts a container removed behind its back as gone", async () => {
    const rt = makeDocker();
    await rt.start();
    removeContainers([rt.info.id!]);
    await rt.stopConfirmed();
    assert.equal(rt.stopped, true);
    assert.ok(!listSandboxes().some((e) => e.id === rt.info.id));
  });

  it("stopById refuses a container without the label, and removes a labelled one", async () => {
    const plain = startPlainContainer(`vf-plain-${process.pid}`);
    try {
      const entry = { provider: "docker", id: plain, created_at: new Date().toISOString() };
      await assert.rejects(docker.stopById!(entry), /lacks the label io\.verifiers-ts\.sandbox/);
      assert.equal(containerNames([plain]).length, 1, "the unlabelled container is untouched");
    } finally {
      removeContainers([plain]);
    }
    const rt = makeDocker();
    await rt.start();
    const logs: string[] = [];
    const entry = { provider: "docker", id: rt.info.id!, created_at: new Date().toISOString() };
    await docker.stopById!(entry, { log: (m) => logs.push(m) });
    assert.deepEqual(containerNames([rt.info.id!]), []);
    await docker.stopById!(entry, { log: (m) => logs.push(m) });
    assert.deepEqual(logs, [`docker sandbox ${rt.info.id} was already gone`]);
  });

  it("fails the start at once for an image not on this machine, naming it and the fix", async () => {
    const rt = makeDocker({ image: "verifiers-ts-test:no-such-image" });
    const t0 = Date.now();
    await assert.rejects(rt.start(), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.match(e.message, /verifiers-ts-test:no-such-image/);
      assert.match(e.hint ?? "", /docker build -t verifiers-ts-test:no-such-image/);
      return true;
    });
    assert.ok(Date.now() - t0 < 20_000);
    assert.ok(!listSandboxes().some((e) => e.name?.includes("t") && e.state === "pending"));
    await rt.stopConfirmed().catch(() => {});
  });

  it("a container whose first process cannot start is removed at once, leaving nothing", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-docker-empty-"));
    const image = `verifiers-ts-test:empty-${process.pid}`;
    try {
      writeFileSync(join(dir, "Dockerfile"), "FROM scratch\nCOPY Dockerfile /Dockerfile\n");
      buildImage(image, dir);
      const rt = makeDocker({ image });
      await assert.rejects(rt.start(), (e: unknown) => {
        assert.ok(e instanceof SandboxError);
        assert.match(e.message, /docker run failed/);
        assert.match(e.hint ?? "", /sleep/);
        return true;
      });
      assert.deepEqual(
        containersLabelled(`${RUN_LABEL}=${RUN}`).filter((id) =>
          !made.some((r) => r.info.id === id)
        ),
        [],
      );
      assert.ok(!listSandboxes().some((e) => e.state === "pending"), "no pending entry left");
    } finally {
      removeImage(image);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("fails a command whose output passes the cap rather than cut it short", async () => {
    const limit = 1024 * 1024;
    const rt = new DockerRuntime(
      { ...docker.config.parse({ image: TEST_IMAGE, workdir: "/work", block: ["*"] }) },
      { name: `t${++seq}`, run: RUN, maxOutputBytes: limit },
    );
    made.push(rt);
    await rt.start();
    const ok = await rt.run(["sh", "-c", `head -c ${limit} /dev/zero`]);
    assert.equal(ok.stdout.length, limit);
    await rt.run(["sh", "-c", `head -c ${limit + 1} /dev/zero > big.bin`]);
    await assert.rejects(
      rt.read("big.bin"),
      (e: unknown) =>
        e instanceof SandboxError &&
        new RegExp(`passed the limit of ${limit} bytes`).test(e.message),
    );
    await assert.rejects(rt.read("big.bin", { maxBytes: 100 }), /1048577 bytes.*limit of 100/);
    await rt.stopConfirmed();
  });

  it("applies memory and cpu limits, readable inside the container", async () => {
    const rt = makeDocker({ memory: 0.25, cpu: 0.5 });
    await rt.start();
    const mem = await rt.run([
      "sh",
      "-c",
      "cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]);
    assert.equal(mem.stdout.trim(), String(0.25 * 1024 ** 3));
    const cpu = await rt.run([
      "sh",
      "-c",
      "cat /sys/fs/cgroup/cpu.max 2>/dev/null || cat /sys/fs/cgroup/cpu/cpu.cfs_quota_us",
    ]);
    assert.match(cpu.stdout.trim(), /^50000( 100000)?$/);
    await rt.stopConfirmed();
  });

  it('block = ["*"] leaves the container no network; no policy uses the host\'s', async () => {
    const { createServer } = await import("node:net");
    const server = createServer((s) => s.end("hi\n"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    try {
      const probe = ["bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`];
      const blocked = makeDocker();
      await blocked.start();
      const t0 = Date.now();
      const r = await blocked.run(probe);
      assert.notEqual(r.exitCode, 0);
      assert.ok(Date.now() - t0 < 2500, "a blocked connection fails fast");
      await blocked.stopConfirmed();
      const open = makeDocker({ block: [] });
      await open.start();
      assert.equal((await open.run(probe)).stdout, "hi\n");
      await open.stopConfirmed();
    } finally {
      server.close();
    }
  });
});
