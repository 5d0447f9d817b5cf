import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import process from "node:process";
import modal, {
  closeModalConnections,
  ModalRuntime,
  ModalRuntimeConfig,
  sandboxDefinition,
  terminateModalSandbox,
} from "../plugins/runtimes/modal/mod.ts";
import { ModalApi } from "../plugins/runtimes/modal/api.ts";
import { GrpcChannel, GrpcError, Status } from "../plugins/runtimes/modal/grpc.ts";
import * as M from "../plugins/runtimes/modal/messages.ts";
import { isLocalServer, resolveModalProfile } from "../plugins/runtimes/modal/profile.ts";
import { ConfigError, SandboxError } from "../kit/errors.ts";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { capHarnessTimeout } from "../kit/runtime/runtime.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import { runtimeConformance } from "./conformance/runtime_conformance.ts";
import { Code } from "./fakes/modal_server.ts";
import type { ModalFake } from "./fakes/modal_server.ts";
import { setupModalEnv } from "./fakes/modal_env.ts";
import type { ModalTestEnv } from "./fakes/modal_env.ts";
import { GrpcStatusError, startGrpcServer } from "./fakes/grpc_server.ts";
import type { RuntimeConfig } from "../kit/contract.ts";
import { taskRuntimeConfig } from "../lib/rollout/task_runtime.ts";

let env: ModalTestEnv;
let fake: ModalFake;
let counter = 0;
const made: Runtime[] = [];

function makeModal(config: Record<string, unknown> = {}, name?: string): Runtime {
  const rt = modal.create(config, { name: name ?? `rt-${++counter}` });
  made.push(rt);
  return rt;
}

/** The SandboxCreate definitions the fake received, newest last. */
function createdDefinitions(): M.SandboxDefinition[] {
  return fake.callsOf("SandboxCreate").map((c) => c.request.definition as M.SandboxDefinition);
}

before(async () => {
  env = await setupModalEnv();
  fake = env.fake;
});

after(async () => {
  for (const rt of made) await rt.stop();
  closeModalConnections();
  await env.dispose();
});

runtimeConformance("modal runtime (fake)", () => makeModal({}, `conformance-${++counter}`));

describe("modal runtime plugin and config", () => {
  it("is a remote runtime plugin with the verifiers defaults", () => {
    assert.equal(modal.id, "modal");
    assert.equal(modal.isLocal, false);
    assert.deepEqual(ModalRuntimeConfig.parse({}), {
      image: "python:3.11-slim",
      workdir: "/app",
      timeout: 86400,
      cpu: 1,
      memory: 2,
      gpu: null,
      region: null,
      network_access: true,
      disk: 5,
      creates_per_sec: 40,
    });
    for (const [key, schema] of Object.entries(ModalRuntimeConfig.shape)) {
      assert.ok((schema.description ?? "").length > 10, `${key} has no description`);
    }
  });

  it("accepts a timeout of exactly 60 and 86400 s and rejects anything outside", () => {
    for (const ok of [60, 86400, 120.5]) {
      assert.equal(modal.create({ timeout: ok }, { name: "x" }).timeoutS, ok);
    }
    for (const bad of [59.99, 0, -1, 86400.5, 1e9]) {
      assert.throws(
        () => modal.create({ timeout: bad }, { name: "x" }),
        (e: unknown) =>
          e instanceof ConfigError &&
          /timeout: timeout must be between 60 and 86400 seconds/.test(e.message),
      );
    }
  });

  it("rejects a bad workdir, gpu count and unknown types with a ConfigError naming the key", () => {
    assert.throws(
      () => modal.create({ workdir: "rel/dir" }, { name: "x" }),
      (e: unknown) => e instanceof ConfigError && /workdir/.test(e.message),
    );
    assert.throws(
      () => modal.create({ gpu: "A100:zero" }, { name: "x" }),
      (e: unknown) => e instanceof ConfigError && /gpu/.test(e.message),
    );
    assert.throws(
      () => modal.create({ cpu: "2" }, { name: "x" }),
      (e: unknown) => e instanceof ConfigError && /cpu/.test(e.message),
    );
  });

  it("maps a config to the verifiers SandboxCreate definition (truncation, MiB, milli-CPU)", () => {
    const cfg = ModalRuntimeConfig.parse({
      timeout: 121.9,
      network_access: false,
      memory: 2.0,
      cpu: 1.0,
      gpu: "a100:2",
      region: "us-east",
    });
    const d = sandboxDefinition(cfg, "im-1", "name-1");
    assert.equal(d.timeoutSecs, 121);
    assert.equal(d.networkAccess?.networkAccessType, M.NetworkAccessType.BLOCKED);
    assert.deepEqual(d.openPorts?.ports, [{
      port: 8000,
      unencrypted: false,
      tunnelType: undefined,
    }]);
    assert.equal(d.resources?.memoryMb, 2048);
    assert.equal(d.resources?.milliCpu, 1000);
    assert.deepEqual(d.resources?.gpuConfig, { type: 0, count: 2, gpuType: "A100" });
    assert.deepEqual(d.schedulerPlacement, { regions: ["us-east"] });
    assert.deepEqual(d.entrypointArgs, ["sleep", "infinity"]);
    assert.equal(d.name, "name-1");
  });

  it("caps a harness timeout at trunc(timeout): 120.5 caps 121 and 120.3 to 120", () => {
    const rt = modal.create({ timeout: 120.5 }, { name: "x" });
    assert.equal(rt.isLocal, false);
    assert.deepEqual(capHarnessTimeout(121, rt), { timeoutS: 120, capped: true });
    assert.deepEqual(capHarnessTimeout(120.3, rt), { timeoutS: 120, capped: true });
    assert.deepEqual(capHarnessTimeout(120, rt), { timeoutS: 120, capped: false });
    const long = modal.create({ timeout: 3600 }, { name: "x" });
    assert.deepEqual(capHarnessTimeout(120, long), { timeoutS: 120, capped: false });
    assert.deepEqual(capHarnessTimeout(3600.5, long), { timeoutS: 3600, capped: true });
    assert.deepEqual(capHarnessTimeout(null, rt), { timeoutS: null, capped: false });
    const short = modal.create({ timeout: 120 }, { name: "x" });
    assert.deepEqual(capHarnessTimeout(3600, short), { timeoutS: 120, capped: true });
  });

  it("resolves the profile from the environment like the official SDK", () => {
    const p = resolveModalProfile();
    assert.equal(p.serverUrl, fake.url);
    assert.equal(p.tokenId, fake.env.MODAL_TOKEN_ID);
    assert.equal(p.imageBuilderVersion, "2024.10");
    assert.equal(isLocalServer(fake.url), true);
    assert.equal(isLocalServer("https://api.modal.com:443"), false);
  });

  it("reads server and tokens from the active profile of MODAL_CONFIG_PATH", () => {
    const saved = { ...process.env };
    try {
      const path = join(env.scratch, "modal.toml");
      writeFileSync(
        path,
        '[other]\ntoken_id = "no"\n[mine]\nactive = true\ntoken_id = "ak-file"\n' +
          'token_secret = "as-file"\nserver_url = "http://127.0.0.1:1"\nenvironment = "dev"\n',
      );
      for (const k of ["MODAL_SERVER_URL", "MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"]) {
        delete process.env[k];
      }
      process.env.MODAL_CONFIG_PATH = path;
      const p = resolveModalProfile();
      assert.deepEqual(
        [p.serverUrl, p.tokenId, p.tokenSecret, p.environment],
        ["http://127.0.0.1:1", "ak-file", "as-file", "dev"],
      );
      process.env.MODAL_PROFILE = "other";
      assert.equal(resolveModalProfile().tokenId, "no");
      assert.equal(resolveModalProfile().serverUrl, "https://api.modal.com:443");
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});

describe("modal sandbox creation", () => {
  it("creates with trunc(timeout), the registry image without ENTRYPOINT, and records it", async () => {
    const rt = makeModal({ timeout: 120.5, workdir: "/srv/work" }, "trace/42 x");
    await rt.start();
    const id = rt.info.id!;
    assert.match(id, /^sb-/);
    assert.equal(rt.info.type, "modal");
    const d = createdDefinitions().at(-1)!;
    assert.equal(d.timeoutSecs, 120);
    assert.equal(d.workdir, "/srv/work");
    assert.equal(d.name, "trace-42-x");
    assert.equal(d.networkAccess?.networkAccessType, M.NetworkAccessType.OPEN);
    const images = fake.callsOf("ImageGetOrCreate").map((c) => c.request.image as M.Image);
    assert.deepEqual(images[0]!.dockerfileCommands, ["FROM python:3.11-slim"]);
    assert.deepEqual(images[1]!.dockerfileCommands, ["FROM base", "ENTRYPOINT []"]);
    assert.equal(images[1]!.baseImages[0]!.dockerTag, "base");
    assert.ok(listSandboxes().some((e) => e.provider === "modal" && e.id === id));
    const ledger = readFileSync(join(env.cacheDir, "sandboxes", `modal-${id}.json`), "utf8");
    assert.ok(ledger.includes(fake.url), "the ledger names the server");
    assert.ok(!ledger.includes(fake.env.MODAL_TOKEN_SECRET!), "no secret in the ledger");
    assert.equal((await rt.run(["pwd"])).stdout.trim().endsWith("/srv/work"), true);
    await rt.stopConfirmed();
    assert.ok(!listSandboxes().some((e) => e.id === id), "ledger entry removed");
  });

  it("sends a task's image, workdir and resources in SandboxCreate", async () => {
    const base = { ...modal.config.parse({}), type: "modal" } as RuntimeConfig;
    const task = {
      prompt: "p",
      image: "task/image:2",
      workdir: "/task",
      resources: { cpu: 2, memory: 0.5, gpu: "A10G:2" },
    };
    const { type: _type, ...config } = taskRuntimeConfig(modal, base, task, () => {}, new Set());
    const rt = makeModal(config);
    await rt.start();
    const d = createdDefinitions().at(-1)!;
    assert.equal(d.workdir, "/task");
    assert.deepEqual(
      [d.resources?.milliCpu, d.resources?.memoryMb, d.resources?.gpuConfig?.gpuType],
      [2000, 512, "A10G"],
    );
    assert.equal(d.resources?.gpuConfig?.count, 2);
    const images = fake.callsOf("ImageGetOrCreate").map((c) => c.request.image as M.Image);
    assert.ok(images.some((i) => i.dockerfileCommands[0] === "FROM task/image:2"));
    await rt.stopConfirmed();
  });

  it("builds each image once per process and reuses the app", async () => {
    const before = fake.callsOf("ImageGetOrCreate").length;
    const apps = fake.callsOf("AppGetOrCreate").length;
    const a = makeModal({ image: "alpine:3.20" });
    const b = makeModal({ image: "alpine:3.20" });
    await Promise.all([a.start(), b.start()]);
    assert.equal(fake.callsOf("ImageGetOrCreate").length - before, 2, "two layers, built once");
    assert.equal(fake.callsOf("AppGetOrCreate").length, apps, "app id cached");
    for (const call of fake.callsOf("AppGetOrCreate")) {
      assert.equal(call.request.appName, "verifiers-v1");
      assert.equal(call.request.objectCreationType, M.ObjectCreationType.CREATE_IF_MISSING);
    }
    await a.stopConfirmed();
    await b.stopConfirmed();
  });

  it("follows an image build through ImageJoinStreaming, resuming after the last entry", async () => {
    fake.knobs.joinEndsWithoutResult = 1;
    const rt = makeModal({ image: "debian:join-test" });
    await rt.start();
    // this start's joins: layer 0 (ends without a result), layer 0 again, layer 1
    const joins = fake.callsOf("ImageJoinStreaming");
    const first = joins.at(-3)!;
    const second = joins.at(-2)!;
    assert.equal(first.request.lastEntryId, "");
    assert.equal(second.request.lastEntryId, "2", "the re-join resumes after entry 2");
    assert.equal(second.request.timeout, 55);
    assert.equal(second.request.imageId, first.request.imageId, "the same build is re-joined");
    await rt.stopConfirmed();
  });

  it("fails the start with the build's exception when the image build fails", async () => {
    fake.knobs.failImageTags.add("ghcr.io/nope/missing:1");
    const creates = fake.callsOf("SandboxCreate").length;
    const rt = makeModal({ image: "ghcr.io/nope/missing:1" });
    await assert.rejects(rt.start(), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.match(e.message, /modal sandbox provisioning failed: .*pull access denied/);
      return true;
    });
    assert.equal(fake.callsOf("SandboxCreate").length, creates, "no sandbox was created");
    assert.equal(rt.info.id, null);
    await rt.stopConfirmed();
  });

  it("polls SandboxGetTaskId until the task is scheduled", async () => {
    fake.knobs.taskIdAfterPolls = 2;
    try {
      const rt = makeModal();
      await rt.start();
      const polls = fake.callsOf("SandboxGetTaskId").filter((c) =>
        c.request.sandboxId === rt.info.id
      );
      assert.equal(polls.length, 3);
      await rt.stopConfirmed();
    } finally {
      fake.knobs.taskIdAfterPolls = 0;
    }
  });

  it("a start that fails after SandboxCreate keeps the handle, and stopConfirmed terminates it", async () => {
    fake.knobs.routerDisabled = true;
    const live = fake.liveSandboxes();
    const rt = makeModal();
    try {
      await assert.rejects(rt.start(), /Command router access is not available/);
    } finally {
      fake.knobs.routerDisabled = false;
    }
    assert.equal(fake.liveSandboxes(), live + 1, "the sandbox exists");
    const terminates = fake.callsOf("SandboxTerminate").length;
    await rt.stopConfirmed();
    assert.equal(fake.callsOf("SandboxTerminate").length, terminates + 1);
    assert.equal(fake.liveSandboxes(), live);
    assert.equal(rt.stopped, true);
  });

  it("paces creation through the shared limiter file (creates_per_sec)", async () => {
    const a = makeModal({ creates_per_sec: 2 });
    await a.start();
    const state = join(env.cacheDir, "limiter", "modal.json");
    const first = JSON.parse(readFileSync(state, "utf8")).next_ms as number;
    const b = makeModal({ creates_per_sec: 2 });
    await b.start();
    const second = JSON.parse(readFileSync(state, "utf8")).next_ms as number;
    assert.ok(second - first >= 500, `slots 500 ms apart (got ${second - first})`);
    await a.stopConfirmed();
    await b.stopConfirmed();
  });

  it("without credentials fails the start before sending anything, naming the variables", async () => {
    const calls = fake.calls.length;
    const rt = new ModalRuntime(ModalRuntimeConfig.parse({}), {
      name: "nocreds",
      profile: { ...resolveModalProfile(), tokenId: null, tokenSecret: null },
    });
    await assert.rejects(rt.start(), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.match(e.message, /credentials are missing/);
      assert.match(e.hint ?? "", /MODAL_TOKEN_ID and MODAL_TOKEN_SECRET/);
      return true;
    });
    assert.equal(fake.calls.length, calls);
  });

  it("with a wrong secret fails UNAUTHENTICATED without echoing the secret", async () => {
    const secret = "as-wrong-secret-4242";
    const rt = new ModalRuntime(ModalRuntimeConfig.parse({}), {
      name: "badcreds",
      profile: { ...resolveModalProfile(), tokenSecret: secret },
    });
    await assert.rejects(rt.start(), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.match(e.message, /UNAUTHENTICATED/);
      assert.ok(!e.message.includes(secret) && !(e.hint ?? "").includes(secret));
      return true;
    });
  });
});

describe("modal stopConfirmed() decision table", () => {
  it("terminates once, sets stopped, keeps the id, and sends nothing the second time", async () => {
    const rt = makeModal();
    await rt.start();
    const id = rt.info.id;
    const n = fake.callsOf("SandboxTerminate").length;
    await rt.stopConfirmed();
    assert.equal(fake.callsOf("SandboxTerminate").length, n + 1);
    assert.equal(rt.stopped, true);
    assert.equal(rt.info.id, id);
    assert.equal(fake.sandbox(id!)?.result?.status, M.GenericStatus.TERMINATED);
    await rt.stopConfirmed();
    await rt.stop();
    assert.equal(fake.callsOf("SandboxTerminate").length, n + 1);
  });

  it("never started: resolves, sends nothing, leaves stopped untouched", async () => {
    const rt = makeModal();
    const n = fake.calls.length;
    await rt.stopConfirmed();
    assert.equal(fake.calls.length, n);
    assert.equal(rt.stopped, false);
  });

  it("after a best-effort stop() consumed the handle, it refuses to confirm", async () => {
    const rt = makeModal();
    await rt.start();
    await rt.stop();
    assert.equal(rt.stopped, true);
    await assert.rejects(rt.stopConfirmed(), /cannot be confirmed without its live handle/);
  });

  it("a stop() whose terminate failed drops the handle and leaves the ledger entry", async () => {
    const rt = makeModal();
    await rt.start();
    const id = rt.info.id!;
    fake.inject({ method: "SandboxTerminate", code: Code.INVALID_ARGUMENT, message: "nope" });
    await rt.stop();
    assert.equal(rt.stopped, true);
    assert.ok(listSandboxes().some((e) => e.id === id), "still in the ledger");
    await assert.rejects(rt.stopConfirmed(), /without its live handle/);
    // what "vf sandboxes gc" does with the entry the failed stop left behind
    const entry = listSandboxes().find((e) => e.id === id)!;
    await modal.stopById!(entry);
    assert.equal(fake.sandbox(id)?.result?.status, M.GenericStatus.TERMINATED);
    assert.ok(!listSandboxes().some((e) => e.id === id), "gc removed the entry");
  });

  it("a failing terminate rejects and keeps the handle; the retry terminates; then idempotent", async () => {
    const rt = makeModal();
    await rt.start();
    const id = rt.info.id!;
    const n = fake.callsOf("SandboxTerminate").length;
    fake.inject({ method: "SandboxTerminate", code: Code.UNAVAILABLE, times: 4 });
    await assert.rejects(rt.stopConfirmed(), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.match(e.message, /deletion not confirmed: .*UNAVAILABLE/);
      return true;
    });
    const attempts = fake.callsOf("SandboxTerminate").slice(n);
    assert.equal(attempts.length, 4, "1 call + 3 retries");
    assert.deepEqual(attempts.map((c) => c.metadata["x-retry-attempt"]), ["0", "1", "2", "3"]);
    assert.equal(new Set(attempts.map((c) => c.metadata["x-idempotency-key"])).size, 1);
    assert.equal(attempts[0]!.metadata["x-retry-delay"], undefined);
    assert.match(attempts[1]!.metadata["x-retry-delay"] ?? "", /^\d+\.\d{3}$/);
    assert.equal(fake.liveSandboxes() > 0, true);
    assert.ok(listSandboxes().some((e) => e.id === id), "unconfirmed: still in the ledger");
    await rt.stopConfirmed();
    assert.equal(fake.callsOf("SandboxTerminate").length, n + 5);
    assert.equal(fake.sandbox(id)?.result?.status, M.GenericStatus.TERMINATED);
    await rt.stopConfirmed();
    assert.equal(fake.callsOf("SandboxTerminate").length, n + 5);
    assert.ok(!listSandboxes().some((e) => e.id === id));
  });

  it("NOT_FOUND from terminate is not confirmation; gc treats it as gone", async () => {
    const rt = makeModal({ timeout: 60 });
    await rt.start();
    const id = rt.info.id!;
    fake.knobs.forgetFinished = true;
    try {
      fake.clock.advance(61_000);
      assert.equal(fake.sandbox(id)?.result?.status, M.GenericStatus.TIMEOUT);
      assert.equal(await rt.alive(), false);
      await assert.rejects(rt.run(["true"]), (e: unknown) => e instanceof SandboxError);
      await assert.rejects(rt.stopConfirmed(), /deletion not confirmed: .*NOT_FOUND/);
      assert.ok(listSandboxes().some((e) => e.id === id));
      assert.equal(await terminateModalSandbox(id, { server_url: fake.url }), "gone");
      const logged: string[] = [];
      await modal.stopById!(listSandboxes().find((e) => e.id === id)!, {
        log: (m) => logged.push(m),
      });
      assert.match(logged.join("\n"), /already gone/);
      assert.ok(!listSandboxes().some((e) => e.id === id), "gc removed the entry");
    } finally {
      fake.knobs.forgetFinished = false;
    }
  });

  it("an expired sandbox terminates as a no-op and counts as confirmed", async () => {
    const rt = makeModal({ timeout: 60 });
    await rt.start();
    const id = rt.info.id!;
    fake.clock.advance(61_000);
    assert.equal(fake.sandbox(id)?.result?.status, M.GenericStatus.TIMEOUT);
    await rt.stopConfirmed();
    assert.equal(rt.stopped, true);
    assert.ok(!listSandboxes().some((e) => e.id === id));
  });

  it("terminates a sandbox the ledger could not record, once", async () => {
    const saved = process.env.VF_CACHE_DIR;
    const blocker = join(env.scratch, "not-a-dir");
    writeFileSync(blocker, "x");
    const rt = makeModal({ creates_per_sec: null });
    const live = fake.liveSandboxes();
    // The pending entry is written before the create; the ledger then becomes unwritable
    // while the create is answered, so the start fails after the sandbox exists.
    fake.knobs.createReplyDelayMs = 300;
    const creates = fake.callsOf("SandboxCreate").length;
    const starting = rt.start();
    starting.catch(() => {});
    await fake.waitForCalls("SandboxCreate", creates + 1);
    process.env.VF_CACHE_DIR = blocker;
    try {
      await assert.rejects(starting, (e: unknown) => e instanceof SandboxError);
    } finally {
      fake.knobs.createReplyDelayMs = 0;
      process.env.VF_CACHE_DIR = saved;
    }
    const id = rt.info.id;
    assert.match(id ?? "", /^sb-/, "the id Modal returned is kept although the ledger failed");
    assert.ok(!listSandboxes().some((e) => e.id === id), "the ledger could not record it");
    assert.equal(fake.liveSandboxes(), live + 1, "but a sandbox exists");
    const n = fake.callsOf("SandboxTerminate").length;
    await rt.stopConfirmed();
    assert.equal(fake.callsOf("SandboxTerminate").length, n + 1);
    assert.equal(rt.stopped, true);
    assert.equal(fake.liveSandboxes(), live);
    await rt.stopConfirmed();
    assert.equal(fake.callsOf("SandboxTerminate").length, n + 1);
  });

  it("refuses to create a sandbox when the ledger cannot journal it", async () => {
    const saved = process.env.VF_CACHE_DIR;
    const blocker = join(env.scratch, "not-a-dir-either");
    writeFileSync(blocker, "x");
    const rt = makeModal({ creates_per_sec: null });
    const creates = fake.callsOf("SandboxCreate").length;
    process.env.VF_CACHE_DIR = blocker;
    try {
      await assert.rejects(rt.start(), (e: unknown) => e instanceof SandboxError);
    } finally {
      process.env.VF_CACHE_DIR = saved;
    }
    assert.equal(fake.callsOf("SandboxCreate").length, creates, "no create was sent");
  });

  it("a restart resets stopped and the confirmed id as soon as the new id is known", async () => {
    const rt = makeModal();
    await rt.start();
    const first = rt.info.id;
    await rt.stopConfirmed();
    assert.equal(rt.stopped, true);
    await rt.start();
    assert.equal(rt.stopped, false);
    assert.notEqual(rt.info.id, first);
    const n = fake.callsOf("SandboxTerminate").length;
    await rt.stopConfirmed();
    assert.equal(fake.callsOf("SandboxTerminate").length, n + 1, "the new sandbox is terminated");
    assert.equal(fake.callsOf("SandboxTerminate").at(-1)!.request.sandboxId, rt.info.id);
  });

  it("stop() during a command ends it and terminates the sandbox", async () => {
    const rt = makeModal();
    await rt.start();
    const running = rt.run(["sleep", "30"]);
    await fake.waitForCalls("TaskExecWait", fake.callsOf("TaskExecWait").length + 1);
    await rt.stopConfirmed();
    const r = await running;
    assert.notEqual(r.exitCode, 0);
    assert.equal(fake.sandbox(rt.info.id!)?.result?.status, M.GenericStatus.TERMINATED);
  });
});

describe("modal exec through the task command router", () => {
  let rt: Runtime;
  before(async () => {
    rt = makeModal();
    await rt.start();
  });

  it("returns exit codes, 128+signal for a killed command, and always asks for PIPE", async () => {
    const n = fake.callsOf("TaskExecStart").length;
    assert.equal((await rt.run(["bash", "-c", "exit 42"])).exitCode, 42);
    assert.equal((await rt.run(["bash", "-c", "kill -9 $$"])).exitCode, 137);
    for (const c of fake.callsOf("TaskExecStart").slice(n)) {
      assert.equal(c.request.stdoutConfig, M.StdioConfig.PIPE);
      assert.equal(c.request.stderrConfig, M.StdioConfig.PIPE);
      assert.equal(c.request.workdir, "/app");
      assert.match(String(c.request.execId), /^[0-9a-f-]{36}$/);
      assert.ok(c.metadata["authorization"]?.startsWith("Bearer "));
      assert.equal(c.metadata["x-modal-token-secret"], undefined, "router calls carry no token");
    }
  });

  it("resumes an interrupted output stream at its byte offset without loss or duplication", async () => {
    fake.knobs.stdioAbortAfterBytes = 1000;
    const n = fake.callsOf("TaskExecStdioRead").length;
    const r = await rt.run(["bash", "-c", "for i in $(seq 1 2000); do echo line-$i; done"]);
    const expected = Array.from({ length: 2000 }, (_, i) => `line-${i + 1}\n`).join("");
    assert.equal(r.stdout, expected);
    const reads = fake.callsOf("TaskExecStdioRead").slice(n)
      .filter((c) => c.request.fileDescriptor === M.StdioFd.STDOUT);
    assert.deepEqual(reads.map((c) => c.request.offset), [0, 1000]);
    assert.equal(reads[0]!.status, Code.UNAVAILABLE);
  });

  it("retries TaskExecWait after DEADLINE_EXCEEDED until the exit arrives", async () => {
    fake.knobs.execWaitCapMs = 100;
    try {
      const n = fake.callsOf("TaskExecWait").length;
      const r = await rt.run(["bash", "-c", "sleep 0.5; echo done"]);
      assert.deepEqual(r, { exitCode: 0, stdout: "done\n", stderr: "" });
      const waits = fake.callsOf("TaskExecWait").slice(n);
      assert.ok(waits.length >= 2, `retried (${waits.length} calls)`);
      assert.equal(waits[0]!.status, Code.DEADLINE_EXCEEDED);
      assert.equal(waits.at(-1)!.status, Code.OK);
    } finally {
      fake.knobs.execWaitCapMs = null;
    }
  });

  it("passes env through an ephemeral secret (as the official SDK)", async () => {
    const n = fake.callsOf("SecretGetOrCreate").length;
    const r = await rt.run(["bash", "-c", 'printf "%s" "$VF_SECRET_X"'], {
      env: { VF_SECRET_X: "v a l" },
    });
    assert.equal(r.stdout, "v a l");
    const secret = fake.callsOf("SecretGetOrCreate").slice(n)[0]!;
    assert.equal(secret.request.objectCreationType, M.ObjectCreationType.EPHEMERAL);
    assert.deepEqual(secret.request.envDict, { VF_SECRET_X: "v a l" });
    const start = fake.callsOf("TaskExecStart").at(-1)!;
    assert.equal((start.request.secretIds as string[]).length, 1);
  });

  it("refreshes an expiring router JWT once on UNAUTHENTICATED and retries", async () => {
    const short = await setupModalEnv({ routerJwtLifetimeS: 10 });
    try {
      const r2 = makeModal();
      await r2.start();
      const accesses = short.fake.callsOf("TaskGetCommandRouterAccess").length;
      short.fake.knobs.expireRouterJwtOnce = true;
      assert.equal((await r2.run(["echo", "again"])).stdout, "again\n");
      assert.equal(short.fake.callsOf("TaskGetCommandRouterAccess").length, accesses + 1);
      const starts = short.fake.callsOf("TaskExecStart").slice(-2);
      assert.equal(starts[0]!.status, Code.UNAUTHENTICATED);
      assert.notEqual(starts[0]!.metadata.authorization, starts[1]!.metadata.authorization);
      await r2.stopConfirmed();
    } finally {
      await short.dispose();
    }
  });

  it("refuses arguments over the 64 KiB limit before sending them", async () => {
    const n = fake.callsOf("TaskExecStart").length;
    await assert.rejects(rt.run(["echo", "x".repeat(70_000)]), /over Modal's limit/);
    assert.equal(fake.callsOf("TaskExecStart").length, n);
  });

  it("exposes port 8000 as an https tunnel URL, and no other port", async () => {
    const m = rt as ModalRuntime;
    assert.equal(await m.expose(8000), `https://${rt.info.id}.fake.modal.host`);
    assert.equal(await m.expose(9000), null);
    fake.knobs.tunnelsTimeout = true;
    try {
      await assert.rejects(m.expose(8000), /tunnels are not ready/);
    } finally {
      fake.knobs.tunnelsTimeout = false;
    }
  });

  it("sends the SDK's metadata: token pair everywhere, auth token on all but AuthTokenGet", () => {
    const controls = fake.calls.filter((c) =>
      c.service === "control" && c.status !== Code.UNAUTHENTICATED
    );
    assert.ok(controls.some((c) => c.method === "AuthTokenGet"));
    for (const c of controls) {
      assert.equal(c.metadata["x-modal-client-type"], "8");
      assert.equal(c.metadata["x-modal-client-version"], "1.0.0");
      assert.equal(c.metadata["x-modal-libmodal-version"], "modal-js/0.7.2");
      assert.equal(c.metadata["x-modal-token-id"], fake.env.MODAL_TOKEN_ID);
      assert.equal(c.metadata["x-modal-token-secret"], fake.env.MODAL_TOKEN_SECRET);
      assert.equal(c.metadata["x-modal-auth-token"] === undefined, c.method === "AuthTokenGet");
      assert.equal(c.metadata["te"], "trailers");
      assert.equal(c.metadata["content-type"], "application/grpc");
    }
  });
});

describe("gRPC transport", () => {
  it("reads trailers-only errors with percent-decoded messages, and stream trailers", async () => {
    const server = await startGrpcServer((path) => {
      if (path === "/t.S/NotFound") {
        return () => {
          throw new GrpcStatusError(5, "no such thing: \u00fc 100% \u2713");
        };
      }
      if (path === "/t.S/Stream") {
        return (_req, call) => {
          call.send(new Uint8Array([1]));
          call.send(new Uint8Array([2]));
          throw new GrpcStatusError(14, "went away");
        };
      }
      if (path === "/t.S/Echo") return (req, call) => call.send(req);
      return null;
    });
    const ch = new GrpcChannel(server.url);
    try {
      assert.deepEqual([...await ch.unary("/t.S/Echo", new Uint8Array([7, 8]))], [7, 8]);
      await assert.rejects(ch.unary("/t.S/NotFound", new Uint8Array()), (e: unknown) => {
        assert.ok(e instanceof GrpcError);
        assert.equal(e.code, Status.NOT_FOUND);
        assert.equal(e.details, "no such thing: \u00fc 100% \u2713");
        return true;
      });
      const got: number[] = [];
      await assert.rejects(
        (async () => {
          for await (const m of ch.serverStream("/t.S/Stream", new Uint8Array())) got.push(m[0]!);
        })(),
        (e: unknown) => e instanceof GrpcError && e.code === Status.UNAVAILABLE,
      );
      assert.deepEqual(got, [1, 2], "messages before the failing trailers are delivered");
      await assert.rejects(
        ch.unary("/t.S/Missing", new Uint8Array()),
        (e: unknown) => e instanceof GrpcError && e.code === Status.UNIMPLEMENTED,
      );
    } finally {
      ch.close();
      await server.close();
    }
  });

  it("maps a non-gRPC HTTP 503 to UNAVAILABLE and a refused connection to UNAVAILABLE", async () => {
    const server = http2.createServer();
    server.on("stream", (stream) => {
      stream.on("error", () => {});
      stream.respond({ ":status": 503, "content-type": "text/plain" });
      stream.end("busy");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    const port = (server.address() as AddressInfo).port;
    const ch = new GrpcChannel(`http://127.0.0.1:${port}`);
    try {
      await assert.rejects(
        ch.unary("/x.Y/Z", new Uint8Array()),
        (e: unknown) => e instanceof GrpcError && e.code === Status.UNAVAILABLE,
      );
    } finally {
      ch.close();
      await new Promise<void>((r) => server.close(() => r()));
    }
    const dead = new GrpcChannel(`http://127.0.0.1:${port}`);
    await assert.rejects(
      dead.unary("/x.Y/Z", new Uint8Array()),
      (e: unknown) => e instanceof GrpcError && e.code === Status.UNAVAILABLE,
    );
    dead.close();
  });

  it("retries UNAVAILABLE 3 times with one idempotency key, and never INVALID_ARGUMENT", async () => {
    const api = new ModalApi(resolveModalProfile());
    try {
      fake.inject({ method: "AppGetOrCreate", code: Code.UNAVAILABLE, times: 3 });
      const n = fake.callsOf("AppGetOrCreate").length;
      assert.match(await api.appGetOrCreate("retry-app", true), /^ap-/);
      const calls = fake.callsOf("AppGetOrCreate").slice(n);
      assert.deepEqual(calls.map((c) => c.metadata["x-retry-attempt"]), ["0", "1", "2", "3"]);
      assert.equal(new Set(calls.map((c) => c.metadata["x-idempotency-key"])).size, 1);
      fake.inject({ method: "AppGetOrCreate", code: Code.INVALID_ARGUMENT });
      const m = fake.callsOf("AppGetOrCreate").length;
      await assert.rejects(api.appGetOrCreate("retry-app", true), /INVALID_ARGUMENT/);
      assert.equal(fake.callsOf("AppGetOrCreate").length, m + 1);
      await assert.rejects(
        api.appGetOrCreate("never-created", false),
        (e: unknown) => e instanceof GrpcError && e.code === Status.NOT_FOUND,
      );
    } finally {
      api.close();
    }
  });

  it("survives a dropped connection by reconnecting on the next call", async () => {
    const api = new ModalApi(resolveModalProfile());
    try {
      await api.appGetOrCreate("drop-app", true);
      fake.inject({ method: "AppGetOrCreate", drop: "connection" });
      assert.match(await api.appGetOrCreate("drop-app", true), /^ap-/);
      const last = fake.callsOf("AppGetOrCreate").slice(-2);
      assert.equal(last[0]!.status, -1);
      assert.equal(last[1]!.metadata["x-retry-attempt"], "1");
    } finally {
      api.close();
    }
  });
});
