import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { runtimeConformance } from "./conformance/runtime_conformance.ts";
import { type PrimeFake, type PrimeFakeOptions, startPrimeFake } from "./fakes/prime_server.ts";
import { ConfigError, SandboxError } from "../kit/errors.ts";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { capHarnessTimeout } from "../kit/runtime/runtime.ts";
import { PrimeClient } from "../plugins/runtimes/prime/client.ts";
import {
  decodeStartResponse,
  encodeStartRequest,
} from "../plugins/runtimes/prime/command_session_pb.ts";
import { encodeSessionEvent } from "./fakes/command_session_proto.ts";
import { createRequestBody, resolvePrimeConfig } from "../plugins/runtimes/prime/config.ts";
import { connectServerStream } from "../plugins/runtimes/prime/connect.ts";
import {
  PrimeApiError,
  PrimeCommandTimeoutError,
  PrimeNotRunningError,
} from "../plugins/runtimes/prime/errors.ts";
import primePlugin, { stopPrimeSandboxById } from "../plugins/runtimes/prime/mod.ts";
import { PrimeRuntime, type PrimeRuntimeOptions } from "../plugins/runtimes/prime/runtime.ts";
import { loadPrimeSettings, normalizeBaseUrl } from "../plugins/runtimes/prime/settings.ts";
import { at } from "./_assert.ts";
import type { RuntimeConfig } from "../kit/contract.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import { taskRuntimeConfig } from "../lib/rollout/task_runtime.ts";
import { useOwnCacheDir } from "./_cache_dir.ts";

const FAST: Omit<PrimeRuntimeOptions, "settings"> = {
  creation: { baseDelayMs: 10, maxDelayMs: 40, imageBuildPollMs: 20, budgetMs: 20_000 },
  client: { backoffScale: 0.001 },
  timing: { jobPollStartMs: 10, jobPollMaxMs: 100, outageBaseMs: 10, outageMaxMs: 50 },
};

const cacheDir = useOwnCacheDir("vf-prime-cache-");
let fake: PrimeFake;
let seq = 0;
const logs: string[] = [];

function makeRuntime(
  config: Record<string, unknown> = {},
  options: Partial<PrimeRuntimeOptions> = {},
  on: PrimeFake = fake,
): PrimeRuntime {
  return new PrimeRuntime(resolvePrimeConfig(config), `vf-test-${++seq}`, {
    ...FAST,
    log: (m) => logs.push(m),
    settings: { baseUrl: on.url, apiKey: on.apiKey, teamId: null },
    ...options,
  });
}

function clientFor(on: PrimeFake = fake): PrimeClient {
  return new PrimeClient(
    { baseUrl: on.url, apiKey: on.apiKey, teamId: null },
    { backoffScale: 0.001 },
  );
}

/** Requests of a kind sent after `mark` (an index into fake.requests). */
function since(mark: number, kind?: string, on: PrimeFake = fake) {
  return on.requests.slice(mark).filter((r) => kind === undefined || r.kind === kind);
}

/** A fake of its own for tests that change its knobs. */
async function ownFake(options: PrimeFakeOptions = {}): Promise<PrimeFake> {
  return await startPrimeFake(options);
}

const sandboxError = (pattern: RegExp) => (e: unknown) => {
  assert.ok(e instanceof SandboxError, `expected a SandboxError, got ${String(e)}`);
  assert.match(e.message, pattern);
  return true;
};

before(async () => {
  fake = await startPrimeFake();
});

after(async () => {
  await fake.close();
});

runtimeConformance("prime (container)", () => makeRuntime());
runtimeConformance("prime (vm)", () => makeRuntime({ vm: true }));

describe("prime config", () => {
  it("accepts a timeout of exactly 60 and 86400 seconds and rejects values outside", () => {
    assert.equal(resolvePrimeConfig({ timeout: 60 }).timeout, 60);
    assert.equal(resolvePrimeConfig({ timeout: 86400 }).timeout, 86400);
    assert.equal(resolvePrimeConfig({}).timeout, 86400);
    for (const bad of [59, 59.9, 86401, 0, -5]) {
      assert.throws(() => resolvePrimeConfig({ timeout: bad }), (e: unknown) => {
        assert.ok(e instanceof ConfigError);
        assert.match(e.message, /timeout must be between 60 and 86400 seconds/);
        return true;
      });
    }
  });

  it("lowers the default idle timeout to the timeout, and keeps an explicit null", () => {
    assert.equal(resolvePrimeConfig({}).idle_timeout, 3600);
    assert.equal(resolvePrimeConfig({ timeout: 120 }).idle_timeout, 120);
    assert.equal(resolvePrimeConfig({ timeout: 60, idle_timeout: null }).idle_timeout, null);
    assert.equal(resolvePrimeConfig({ timeout: 120, idle_timeout: 120 }).idle_timeout, 120);
  });

  it("rejects an explicit idle timeout above the timeout, and a non-positive one", () => {
    assert.throws(
      () => resolvePrimeConfig({ timeout: 120, idle_timeout: 121 }),
      /idle_timeout \(121s\) must not exceed the hard sandbox timeout \(120s\)/,
    );
    assert.throws(() => resolvePrimeConfig({ idle_timeout: 0 }), /must be positive or null/);
    assert.throws(() => resolvePrimeConfig({ idle_timeout: -3 }), /must be positive or null/);
  });

  it("rounds minutes up: timeout=121, idle=61 -> 3 and 2; a short idle is at least 1", () => {
    const body = createRequestBody(
      resolvePrimeConfig({ timeout: 121, idle_timeout: 61, labels: ["x"] }),
      "n",
    );
    assert.equal(body.timeout_minutes, 3);
    assert.equal(body.idle_timeout_minutes, 2);
    const short = createRequestBody(resolvePrimeConfig({ timeout: 60, idle_timeout: 1 }), "n");
    assert.equal(short.timeout_minutes, 1);
    assert.equal(short.idle_timeout_minutes, 1);
  });

  it("checks GPU and guaranteed rules", () => {
    assert.throws(() => resolvePrimeConfig({ gpu: "A100:2" }), /gpu needs vm = true/);
    assert.throws(() => resolvePrimeConfig({ gpu: "2", vm: true }), /gpu needs a type/);
    assert.throws(() => resolvePrimeConfig({ guaranteed: true, vm: true }), /vm = false/);
    const body = createRequestBody(resolvePrimeConfig({ gpu: "A100:2", vm: true }), "n");
    assert.equal(body.gpu_count, 2);
    assert.equal(body.gpu_type, "A100");
  });

  it("reads the base URL and key like the Prime tools, stripping /api/v1", () => {
    assert.equal(normalizeBaseUrl("https://x.example/api/v1/"), "https://x.example");
    const saved = { ...process.env };
    try {
      process.env.PRIME_API_BASE_URL = "http://127.0.0.1:1/api/v1";
      process.env.PRIME_BASE_URL = "http://ignored";
      process.env.PRIME_API_KEY = "k1";
      process.env.PRIME_TEAM_ID = "team-1";
      assert.deepEqual(loadPrimeSettings(), {
        baseUrl: "http://127.0.0.1:1",
        apiKey: "k1",
        teamId: "team-1",
      });
      delete process.env.PRIME_API_BASE_URL;
      assert.equal(loadPrimeSettings().baseUrl, "http://ignored");
    } finally {
      for (const k of ["PRIME_API_BASE_URL", "PRIME_BASE_URL", "PRIME_API_KEY", "PRIME_TEAM_ID"]) {
        if (saved[k] === undefined) delete process.env[k];
        else process.env[k] = saved[k];
      }
    }
  });

  it("the plugin rejects a bad config with a ConfigError before any request", () => {
    const before = fake.requests.length;
    assert.throws(
      () => primePlugin.create({ type: "prime", timeout: 30 }, { name: "x" }),
      ConfigError,
    );
    assert.equal(fake.requests.length, before);
  });
});

describe("prime create request", () => {
  it("sends minutes, labels and an idempotency key, and no network_access", async () => {
    const mark = fake.requests.length;
    const rt = makeRuntime({ timeout: 121, idle_timeout: 61, labels: ["x"], vm: false });
    await rt.start();
    await rt.stopConfirmed();
    const create = at(since(mark, "create"), 0);
    const body = create.json as Record<string, unknown>;
    assert.equal(body.timeout_minutes, 3);
    assert.equal(body.idle_timeout_minutes, 2);
    assert.deepEqual(body.labels, ["x"]);
    assert.match(String(body.idempotency_key), /^[0-9a-f]{32}$/);
    assert.equal("network_access" in body, false);
    assert.equal(create.headers.authorization, `Bearer ${fake.apiKey}`);
  });

  it("omits the idle timeout for VMs", async () => {
    const mark = fake.requests.length;
    const rt = makeRuntime({ timeout: 121, idle_timeout: 61, vm: true });
    await rt.start();
    await rt.stopConfirmed();
    const body = at(since(mark, "create"), 0).json as Record<string, unknown>;
    assert.equal("idle_timeout_minutes" in body, false);
    assert.equal(body.vm, true);
  });
});

describe("prime runtime and a task's own settings", () => {
  const task = {
    prompt: "p",
    idx: 3,
    image: "task/image:1",
    workdir: "/task",
    resources: { cpu: 2, memory: 3, disk: 7 },
  };
  const forTask = (settings: Record<string, unknown>, data: TaskData = task) => {
    const base = { ...primePlugin.config.parse(settings), type: "prime" } as RuntimeConfig;
    const { type: _type, ...config } = taskRuntimeConfig(
      primePlugin,
      base,
      data,
      () => {},
      new Set(),
    );
    return config;
  };

  it("sends the task's image, workdir and resources in the create request", async () => {
    const mark = fake.requests.length;
    const rt = makeRuntime(forTask({}));
    await rt.start();
    assert.equal(rt.workdir, "/task");
    await rt.stopConfirmed();
    const body = at(since(mark, "create"), 0).json as Record<string, unknown>;
    assert.deepEqual(
      [body.docker_image, body.cpu_cores, body.memory_gb, body.disk_size_gb],
      ["task/image:1", 2, 3, 7],
    );
  });

  it("keeps what the config set over the task, and refuses a GPU the provider cannot give", () => {
    assert.deepEqual(
      [forTask({ cpu: 4 }).cpu, forTask({ cpu: 4 }).memory],
      [4, 3],
    );
    assert.throws(
      () => makeRuntime(forTask({}, { prompt: "p", resources: { gpu: "A100" } })),
      (e: unknown) => e instanceof ConfigError && /gpu needs vm = true/.test(e.message),
    );
  });
});

describe("prime creation limiter", () => {
  it("paces creates through the user-wide limiter only when creates_per_min is set", async () => {
    const state = join(cacheDir(), "limiter", "prime.json");
    rmSync(state, { force: true });
    const free = makeRuntime();
    await free.start();
    await free.stopConfirmed();
    assert.throws(() => readFileSync(state), /ENOENT/);
    const before = Date.now();
    const paced = makeRuntime({ creates_per_min: 6000 });
    await paced.start();
    await paced.stopConfirmed();
    const next = JSON.parse(readFileSync(state, "utf8")).next_ms;
    assert.ok(next >= before + 10, "the next slot is one interval (10 ms) after this create");
  });
});

describe("harness timeout cap on a prime runtime", () => {
  it("caps at the lifetime, passes shorter ones through, and leaves local runtimes alone", () => {
    const rt = makeRuntime({ timeout: 120 });
    assert.deepEqual(capHarnessTimeout(3600, rt), { timeoutS: 120, capped: true });
    assert.deepEqual(capHarnessTimeout(120.5, rt), { timeoutS: 120, capped: true });
    assert.deepEqual(capHarnessTimeout(null, rt), { timeoutS: null, capped: false });
    assert.deepEqual(capHarnessTimeout(120, makeRuntime({ timeout: 3600 })), {
      timeoutS: 120,
      capped: false,
    });
    assert.deepEqual(capHarnessTimeout(999999, { isLocal: true, timeoutS: null }), {
      timeoutS: 999999,
      capped: false,
    });
  });
});

describe("prime stopConfirmed decision table", () => {
  it("happy path: one DELETE, stopped, client dropped, id kept; a repeat sends nothing", async () => {
    const rt = makeRuntime();
    await rt.start();
    const id = rt.info.id!;
    const mark = fake.requests.length;
    await rt.stopConfirmed();
    assert.equal(since(mark, "delete").length, 1);
    assert.equal(rt.stopped, true);
    assert.equal(rt.hasClient, false);
    assert.equal(rt.info.id, id);
    assert.equal(rt.confirmedStopId, id);
    const mark2 = fake.requests.length;
    await rt.stopConfirmed();
    assert.equal(fake.requests.length, mark2);
    assert.equal(fake.sandboxes.get(id)!.deleted, true);
  });

  it("concurrent calls share one DELETE", async () => {
    const rt = makeRuntime();
    await rt.start();
    const mark = fake.requests.length;
    await Promise.all([rt.stopConfirmed(), rt.stopConfirmed(), rt.stopConfirmed()]);
    assert.equal(since(mark, "delete").length, 1);
  });

  it("a DELETE answered 404 confirms (typed status), and a repeat sends nothing", async () => {
    const rt = makeRuntime();
    await rt.start();
    const id = rt.info.id!;
    fake.fault({ kind: "delete", respond: { status: 404, body: { detail: "Sandbox not found" } } });
    const mark = fake.requests.length;
    await rt.stopConfirmed();
    assert.equal(rt.stopped, true);
    assert.equal(rt.confirmedStopId, id);
    assert.equal(rt.hasClient, false);
    assert.ok(logs.some((l) => l.includes(id) && l.includes("already gone")));
    await rt.stopConfirmed();
    assert.equal(since(mark, "delete").length, 1);
  });

  it("a sandbox reaped by its idle timeout is confirmed gone by the DELETE's 404", async () => {
    const rt = makeRuntime({ timeout: 600, idle_timeout: 60 });
    await rt.start();
    const id = rt.info.id!;
    fake.clock.advance(61_000);
    assert.equal(await rt.alive(), false, "the sandbox is gone after its idle timeout");
    const mark = fake.requests.length;
    await rt.stopConfirmed();
    const [del] = since(mark, "delete");
    assert.ok(del, "a DELETE was sent");
    assert.equal(rt.confirmedStopId, id);
    assert.equal(fake.sandboxes.get(id)!.terminationReason, "idle timeout");
  });

  it("a DELETE answered 500 raises and keeps the client; a retry then succeeds; then nothing", async () => {
    const rt = makeRuntime();
    await rt.start();
    const id = rt.info.id!;
    const mark = fake.requests.length;
    fake.fault({ kind: "delete", respond: { status: 500, body: { detail: "boom" } } });
    await assert.rejects(rt.stopConfirmed(), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.equal(e.statusCode, 500);
      assert.match(e.message, /HTTP 500: boom/);
      return true;
    });
    assert.equal(rt.hasClient, true);
    assert.equal(rt.confirmedStopId, null);
    assert.equal(rt.stopped, false);
    assert.ok(listSandboxes().some((e) => e.id === id), "still in the ledger");
    await rt.stopConfirmed();
    assert.equal(rt.stopped, true);
    await rt.stopConfirmed();
    assert.equal(since(mark, "delete").length, 2);
    assert.ok(!listSandboxes().some((e) => e.id === id), "removed from the ledger");
  });

  it("a dropped connection whose error text mentions 404 does not confirm", async () => {
    const f = await ownFake({ idPrefix: "sbx404x" });
    try {
      const rt = makeRuntime({}, {}, f);
      await rt.start();
      const id = rt.info.id!;
      assert.ok(id.includes("404"));
      const mark = f.requests.length;
      f.fault({ kind: "delete", reset: true, times: 100 });
      await assert.rejects(rt.stopConfirmed(), (e: unknown) => {
        assert.ok(e instanceof SandboxError);
        assert.match(e.message, /404/, "the transport error names the path with 404 in it");
        assert.equal(e.statusCode, null);
        assert.ok(e.cause instanceof PrimeApiError && e.cause.transport === "network");
        return true;
      });
      assert.equal(rt.confirmedStopId, null);
      assert.equal(rt.hasClient, true);
      assert.equal(f.sandboxes.get(id)!.deleted, false);
      assert.ok(
        since(mark, "delete", f).length >= 3,
        "a DELETE is retried on a dropped connection",
      );
      f.clearFaults();
      await rt.stopConfirmed();
      assert.equal(f.sandboxes.get(id)!.deleted, true);
      assert.equal(rt.confirmedStopId, id);
    } finally {
      await f.close();
    }
  });

  it("a start that failed before an id existed releases the client before raising", async () => {
    const rt = makeRuntime();
    fake.fault({ kind: "create", respond: { status: 402, body: { detail: "no credits" } } });
    await assert.rejects(rt.start(), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.match(e.message, /prime sandbox provisioning failed: Payment required: no credits/);
      assert.equal(e.statusCode, 402);
      return true;
    });
    assert.equal(rt.info.id, null);
    assert.equal(rt.hasClient, true);
    await assert.rejects(rt.stopConfirmed(), sandboxError(/without a provider ID/));
    assert.equal(rt.hasClient, false);
    const mark = fake.requests.length;
    await rt.stopConfirmed();
    assert.equal(fake.requests.length, mark);
  });

  it("after a best-effort stop() with an id, stopConfirmed() raises; with nothing it resolves", async () => {
    const rt = makeRuntime();
    await rt.start();
    await rt.stop();
    assert.equal(rt.stopped, true);
    await assert.rejects(rt.stopConfirmed(), sandboxError(/without its live client/));
    const fresh = makeRuntime();
    const mark = fake.requests.length;
    await fresh.stopConfirmed();
    assert.equal(fake.requests.length, mark);
    assert.equal(fresh.stopped, false, "nothing was ever created: stopped untouched");
  });

  it("a restart resets stopped and the confirmed id as soon as the new id is known", async () => {
    const ok = makeRuntime();
    await ok.start();
    const first = ok.info.id!;
    await ok.stopConfirmed();
    assert.equal(ok.stopped, true);
    await ok.start();
    assert.equal(ok.stopped, false);
    assert.equal(ok.confirmedStopId, null);
    assert.notEqual(ok.info.id, first);
    await ok.stopConfirmed();

    // the reset happens before the wait: a start failing after create has the flags reset
    fake.options.failingImages["broken:latest"] = "IMAGE_PULL_FAILED";
    try {
      const rt = makeRuntime({ image: "broken:latest" });
      await rt.start().catch(() => {});
      await rt.stopConfirmed();
      assert.equal(rt.stopped, true);
      const confirmed = rt.confirmedStopId;
      assert.ok(confirmed);
      await assert.rejects(rt.start(), sandboxError(/IMAGE_PULL_FAILED/));
      assert.equal(rt.stopped, false);
      assert.equal(rt.confirmedStopId, null);
      assert.ok(rt.info.id && rt.info.id !== confirmed);
      await rt.stopConfirmed();
    } finally {
      delete fake.options.failingImages["broken:latest"];
    }
  });
});

describe("prime sandbox ledger", () => {
  it("records a sandbox when its id is known and removes it once stopped", async () => {
    const rt = makeRuntime({}, { run: "runs/r1" });
    await rt.start();
    const id = rt.info.id!;
    const entry = listSandboxes().find((e) => e.id === id);
    assert.ok(entry);
    assert.equal(entry.provider, "prime");
    assert.equal(entry.run, "runs/r1");
    assert.deepEqual(entry.config, { base_url: fake.url });
    for (const file of readdirSync(join(cacheDir(), "sandboxes"))) {
      assert.ok(!readFileSync(join(cacheDir(), "sandboxes", file), "utf8").includes(fake.apiKey));
    }
    await rt.stop();
    assert.ok(!listSandboxes().some((e) => e.id === id), "a DELETE that worked removes it");
  });

  it("stopPrimeSandboxById confirms a ledger entry, with 404 as gone", async () => {
    const rt = makeRuntime();
    await rt.start();
    const id = rt.info.id!;
    const entry = { provider: "prime", id, created_at: "", config: { base_url: fake.url } };
    const restore = fake.useEnv();
    try {
      await stopPrimeSandboxById(entry);
      assert.equal(fake.sandboxes.get(id)!.deleted, true);
      await stopPrimeSandboxById(entry); // 404 now: still fine
      fake.fault({ kind: "delete", respond: { status: 503, body: { detail: "busy" } }, times: 3 });
      await assert.rejects(
        stopPrimeSandboxById(entry, { client: { backoffScale: 0.001 } }),
        /HTTP 503/,
      );
    } finally {
      restore();
    }
  });

  it("findPending looks a pending entry's name up in Prime's listing, with the client's retries", async () => {
    const rt = makeRuntime({ labels: ["gc-lookup"] });
    await rt.start();
    const id = rt.info.id!;
    const name = fake.sandboxes.get(id)!.name;
    const pending = {
      provider: "prime",
      id: "",
      created_at: "",
      state: "pending" as const,
      key: "k",
      name,
      labels: ["gc-lookup"],
      config: { base_url: fake.url },
    };
    const findPending = primePlugin.findPending!;
    const restore = fake.useEnv();
    try {
      // a reset before the answer and a 503 are ridden out, as by every control-plane GET
      fake.fault({ kind: "list", reset: true });
      fake.fault({ kind: "list", respond: { status: 503, body: { detail: "busy" } } });
      const mark = fake.requests.length;
      assert.deepEqual(await findPending(pending), [id]);
      const lists = since(mark, "list");
      assert.equal(lists.length, 3, "two failures, then the answer");
      assert.ok(lists.every((r) => r.query.is_active === "true" && r.query.labels === "gc-lookup"));
      assert.deepEqual(await findPending({ ...pending, name: `${name}-other` }), []);
      assert.deepEqual(await findPending({ ...pending, labels: ["not-on-it"] }), []);
      const before = fake.requests.length;
      assert.deepEqual(await findPending({ ...pending, name: null }), [], "no name, no lookup");
      assert.equal(fake.requests.length, before);
      // a 500 is not retried; the failure names the provider and the sandbox
      fake.fault({ kind: "list", respond: { status: 500, body: { detail: "listing broke" } } });
      await assert.rejects(
        findPending(pending),
        sandboxError(
          new RegExp(`^prime lookup of sandbox "${name}" failed: HTTP 500: listing broke$`),
        ),
      );
    } finally {
      restore();
      await rt.stop();
    }
  });
});

describe("prime creation wait", () => {
  it("polls PENDING -> RUNNING in one batched request per round, then probes", async () => {
    fake.options.readsUntilRunning = 3;
    try {
      const mark = fake.requests.length;
      const rts = [makeRuntime(), makeRuntime(), makeRuntime()];
      await Promise.all(rts.map((r) => r.start()));
      const batches = since(mark, "batch");
      assert.ok(batches.length >= 4, `PENDING three times, then RUNNING: ${batches.length}`);
      assert.ok(
        batches.some((b) => b.statusIds!.length === 3),
        "concurrent waits share one request",
      );
      assert.equal(since(mark, "get").length, 0);
      for (const r of rts) await r.stopConfirmed();
    } finally {
      fake.options.readsUntilRunning = 0;
    }
  });

  it("an image that fails to pull is a typed failure naming the type", async () => {
    fake.options.failingImages["nope:1"] = "IMAGE_PULL_FAILED";
    try {
      const rt = makeRuntime({ image: "nope:1" });
      await assert.rejects(rt.start(), (e: unknown) => {
        assert.ok(e instanceof SandboxError);
        assert.match(e.message, /ERROR \(IMAGE_PULL_FAILED/);
        assert.ok(e.cause instanceof PrimeNotRunningError);
        assert.equal(e.cause.errorType, "IMAGE_PULL_FAILED");
        assert.match(e.hint ?? "", /image/);
        return true;
      });
      await rt.stopConfirmed();
    } finally {
      delete fake.options.failingImages["nope:1"];
    }
  });

  it("an image build longer than the normal budget succeeds, with image_cached false", async () => {
    // 12 build polls 60 ms apart outlast the 400 ms budget however fast the machine is,
    // and the budget still leaves a loaded machine room for the reads after the build
    fake.options.imageBuilds["built:1"] = 12;
    try {
      const rt = makeRuntime({ image: "built:1" }, {
        creation: { ...FAST.creation, budgetMs: 400, imageBuildPollMs: 60 },
      });
      await rt.start();
      assert.equal(rt.info.image_cached, false);
      assert.ok(logs.some((l) => l.includes("built on first use")));
      await rt.stopConfirmed();
    } finally {
      delete fake.options.imageBuilds["built:1"];
    }
  });

  it("keeps probing while the gateway does not know the new sandbox yet", async () => {
    fake.options.gatewayLag = 3;
    try {
      const mark = fake.requests.length;
      const rt = makeRuntime();
      await rt.start();
      const execs = since(mark, "exec");
      assert.ok(execs.length >= 5, "3 refused probes, 1 good one, then mkdir");
      assert.equal((await rt.run(["echo", "ok"])).stdout, "ok\n");
      await rt.stopConfirmed();
    } finally {
      fake.options.gatewayLag = 0;
    }
  });

  it("falls back to per-id GETs when the batch endpoint is unsupported", async () => {
    const f = await ownFake({ batchUnsupported: true, readsUntilRunning: 1 });
    try {
      const rt = makeRuntime({}, {}, f);
      await rt.start();
      assert.equal(f.count("batch"), 1, "asked once, then remembered");
      assert.ok(f.count("get") >= 2);
      await rt.stopConfirmed();
    } finally {
      await f.close();
    }
  });
});

describe("prime client errors and retries", () => {
  let client: PrimeClient;
  let id = "";
  before(async () => {
    client = clientFor();
    const rec = await client.createSandbox({
      name: "errs",
      docker_image: "img",
      vm: false,
      timeout_minutes: -1,
    });
    await client.batchStatus([rec.id]);
    id = rec.id;
  });
  after(async () => {
    await client.deleteSandbox(id).catch(() => {});
    client.close();
  });

  it("maps the gateway's 502 sandbox_not_found to 'no longer running'", async () => {
    fake.fault({
      kind: "exec",
      respond: { status: 502, body: { error: "sandbox_not_found", sandboxId: id, code: 502 } },
    });
    await assert.rejects(client.exec(id, "true"), (e: unknown) => {
      assert.ok(e instanceof PrimeNotRunningError);
      assert.match(e.message, /no longer running/);
      assert.equal(e.errorType, "SANDBOX_NOT_FOUND");
      return true;
    });
  });

  it("a 502 with another error is a generic API error", async () => {
    fake.fault({ kind: "exec", respond: { status: 502, body: { error: "gateway_error" } } });
    await assert.rejects(client.exec(id, "true"), (e: unknown) => {
      assert.ok(e instanceof PrimeApiError && !(e instanceof PrimeNotRunningError));
      assert.equal(e.httpStatus, 502);
      assert.doesNotMatch(e.message, /no longer running/);
      return true;
    });
  });

  it("retries a 409 while error-context says RUNNING, at most 4 attempts", async () => {
    let mark = fake.requests.length;
    fake.fault({ kind: "exec", respond: { status: 409, body: { detail: "busy" } }, times: 3 });
    assert.equal((await client.exec(id, "echo hi")).stdout, "hi\n");
    assert.equal(since(mark, "exec").length, 4);
    assert.equal(since(mark, "error-context").length, 3);
    mark = fake.requests.length;
    fake.fault({ kind: "exec", respond: { status: 409, body: { detail: "busy" } }, times: 4 });
    await assert.rejects(client.exec(id, "echo hi"), /transient DNS or gateway issue/);
    assert.equal(since(mark, "exec").length, 4);
  });

  it("re-authenticates once on a gateway 401, and fails on a second", async () => {
    let mark = fake.requests.length;
    fake.fault({ kind: "exec", respond: { status: 401, body: { detail: "expired" } } });
    assert.equal((await client.exec(id, "echo again")).stdout, "again\n");
    assert.equal(since(mark, "auth").length, 1);
    mark = fake.requests.length;
    fake.fault({ kind: "exec", respond: { status: 401, body: { detail: "expired" } }, times: 2 });
    await assert.rejects(client.exec(id, "true"), (e: unknown) => {
      assert.ok(e instanceof PrimeApiError);
      assert.equal(e.httpStatus, 401);
      return true;
    });
    assert.equal(since(mark, "exec").length, 2);
  });

  it("caches gateway auth, shares concurrent refreshes, and refreshes an expired token", async () => {
    const c = clientFor();
    try {
      let mark = fake.requests.length;
      await Promise.all([c.auth(id), c.auth(id), c.auth(id), c.auth(id)]);
      await c.auth(id);
      assert.equal(since(mark, "auth").length, 1);
      fake.clock.advance(3_600_000 + 1000); // the fake's token expired; the client still trusts it
      mark = fake.requests.length;
      assert.equal((await c.exec(id, "echo fresh")).stdout, "fresh\n");
      assert.equal(since(mark, "auth").length, 1);
    } finally {
      c.close();
    }
  });

  it("an exec over its timeout is a command timeout while the sandbox runs", async () => {
    await assert.rejects(
      client.exec(id, "sleep 5", { timeoutS: 1 }),
      (e: unknown) => e instanceof PrimeCommandTimeoutError,
    );
  });

  it("a plain POST cut off mid-response is not retried", async () => {
    let mark = fake.requests.length;
    fake.fault({ kind: "exec", readError: true });
    await assert.rejects(client.exec(id, "true"), (e: unknown) => {
      assert.ok(e instanceof PrimeApiError);
      assert.equal(e.transport, "network");
      assert.equal(e.phase, "read");
      return true;
    });
    assert.equal(since(mark, "exec").length, 1);
    mark = fake.requests.length;
    fake.fault({ kind: "expose", readError: true });
    await assert.rejects(client.expose(id, 8000), PrimeApiError);
    assert.equal(since(mark, "expose").length, 1);
  });

  it("a GET whose connection drops is retried", async () => {
    const mark = fake.requests.length;
    fake.fault({ kind: "get", reset: true });
    assert.equal((await client.getSandbox(id)).status, "RUNNING");
    assert.ok(since(mark, "get").length >= 2);
  });

  it("create is retried after a cut-off answer with the same key: one sandbox", async () => {
    const before = fake.sandboxes.size;
    const mark = fake.requests.length;
    fake.fault({ kind: "create", readError: true });
    const rec = await client.createSandbox({ name: "idem", docker_image: "img", vm: false });
    const creates = since(mark, "create");
    assert.equal(creates.length, 2);
    const keys = creates.map((c) => (c.json as { idempotency_key: string }).idempotency_key);
    assert.equal(keys[0], keys[1]);
    assert.equal(fake.sandboxes.size, before + 1);
    fake.fault({ kind: "create", respond: { status: 503, body: { detail: "busy" } } });
    const rec2 = await client.createSandbox({ name: "idem2", docker_image: "img", vm: false });
    const all = since(mark, "create").map((c) =>
      (c.json as { idempotency_key: string }).idempotency_key
    );
    assert.equal(all.length, 4);
    assert.equal(all[2], all[3], "the 503 retry reuses its key");
    assert.notEqual(all[0], all[2], "two creates, two keys");
    await client.deleteSandbox(rec.id);
    await client.deleteSandbox(rec2.id);
  });

  it("never puts the API key in an error", async () => {
    const bad = new PrimeClient({ baseUrl: fake.url, apiKey: "pk-secret-wrong", teamId: null });
    try {
      await assert.rejects(bad.getSandbox(id), (e: unknown) => {
        assert.ok(e instanceof PrimeApiError);
        assert.equal(e.httpStatus, 401);
        assert.match(e.message, /^Unauthorized/);
        assert.ok(!JSON.stringify({ m: e.message, d: e.detail }).includes("pk-secret-wrong"));
        return true;
      });
    } finally {
      bad.close();
    }
  });
});

describe("prime jobs, uploads and the Connect session", () => {
  it("rides out poll failures on the same job: 1 start, the failed polls, then the result", async () => {
    const rt = makeRuntime();
    await rt.start();
    try {
      const mark = fake.requests.length;
      fake.fault({ kind: "read-file", path: /exit/, reset: true });
      fake.fault({ kind: "read-file", path: /exit/, respond: { status: 503, body: {} } });
      const r = await rt.run(["bash", "-c", "echo from-the-job; exit 4"]);
      assert.deepEqual(r, { exitCode: 4, stdout: "from-the-job\n", stderr: "" });
      const launches = since(mark, "exec");
      assert.equal(launches.length, 1, "the job was started once");
      const polls = since(mark, "read-file").filter((q) => (q.query.path ?? "").endsWith("/exit"));
      assert.ok(polls.length >= 3, `two failed polls, then a good one: ${polls.length}`);
    } finally {
      await rt.stopConfirmed();
    }
  });

  it("a poll failing for good (401 after the re-auth) fails the run with no more polls", async () => {
    const rt = makeRuntime();
    await rt.start();
    try {
      const mark = fake.requests.length;
      fake.fault({
        kind: "read-file",
        path: /exit/,
        respond: { status: 401, body: { detail: "nope" } },
        times: 2,
      });
      await assert.rejects(
        rt.run(["sleep", "0.2"]),
        sandboxError(/prime exec failed: Unauthorized/),
      );
      const polls = () =>
        since(mark, "read-file").filter((q) => (q.query.path ?? "").endsWith("/exit"));
      assert.equal(polls().length, 2);
      assert.equal(since(mark, "auth").length, 1);
      await new Promise((r) => setTimeout(r, 150));
      assert.equal(polls().length, 2);
    } finally {
      await rt.stopConfirmed();
    }
  });

  it("repeats mkdir and upload with the same path and bytes after an upload timeout", async () => {
    const rt = makeRuntime({}, { client: { backoffScale: 0.001, transferTimeoutMs: 300 } });
    await rt.start();
    try {
      const mark = fake.requests.length;
      fake.fault({ kind: "upload", delayMs: 1200 });
      await rt.write("up/data.bin", new Uint8Array([1, 2, 3, 4, 5]));
      const uploads = since(mark, "upload");
      assert.equal(uploads.length, 2);
      assert.equal(at(uploads, 0).query.path, at(uploads, 1).query.path);
      assert.equal(at(uploads, 0).bodyBytes, at(uploads, 1).bodyBytes);
      assert.equal(since(mark, "exec").length, 2, "mkdir each time");
      assert.deepEqual([...await rt.read("up/data.bin")], [1, 2, 3, 4, 5]);
    } finally {
      await rt.stopConfirmed();
    }
  });

  it("a deleted sandbox makes run() fail with 'no longer running'", async () => {
    const rt = makeRuntime();
    await rt.start();
    const c = clientFor();
    await c.deleteSandbox(rt.info.id!);
    c.close();
    await assert.rejects(rt.run(["true"]), sandboxError(/no longer running/));
    assert.equal(await rt.alive(), false);
    await rt.stopConfirmed(); // 404 = gone
    assert.equal(rt.stopped, true);
  });

  it("Connect: deadline, not found, a re-auth, a signal, and a stream cut short", async () => {
    const c = clientFor();
    const rec = await c.createSandbox({
      name: "vm",
      docker_image: "img",
      vm: true,
      timeout_minutes: -1,
    });
    await c.batchStatus([rec.id]);
    try {
      await assert.rejects(c.exec(rec.id, "sleep 5", { timeoutS: 1 }), PrimeCommandTimeoutError);
      const r = await c.exec(rec.id, "echo $X; pwd; exit 7", { env: { X: "y z" }, cwd: "/tmp" });
      assert.deepEqual(r, { stdout: "y z\n/tmp\n", stderr: "", exitCode: 7 });

      fake.clock.advance(3_600_000 + 1000);
      const mark = fake.requests.length;
      assert.equal((await c.exec(rec.id, "echo ok")).stdout, "ok\n");
      assert.equal(since(mark, "auth").length, 1, "unauthenticated -> one re-auth");

      // a live session: read its pid from the stream, then signal it
      const a = await c.auth(rec.id);
      const url = `${a.gatewayUrl}/${a.userNs}/${a.jobId}/command_session.CommandSession/Start`;
      const stream = connectServerStream({
        fetch: (i, init) => fetch(i, init),
        url,
        token: a.token,
        request: encodeStartRequest({
          command: { cmd: "/bin/sh", args: ["-c", "sleep 30"], envs: {} },
        }),
        timeoutMs: 60_000,
      });
      const events = [];
      for await (const msg of stream) {
        const ev = decodeStartResponse(msg)!;
        events.push(ev);
        if (ev.kind === "start") await c.sendSignal(rec.id, ev.pid, 9);
      }
      const end = events.find((e) => e.kind === "end");
      assert.ok(end && end.kind === "end" && end.exitCode === 137, JSON.stringify(events));

      fake.fault({ kind: "connect-start", readError: true });
      await assert.rejects(c.exec(rec.id, "echo cut"), (e: unknown) => {
        assert.ok(e instanceof PrimeApiError);
        assert.equal(e.transport, "network");
        return true;
      });

      await c.deleteSandbox(rec.id);
      await assert.rejects(c.exec(rec.id, "true"), PrimeNotRunningError);
    } finally {
      c.close();
    }
  });

  it("encodes the command session messages to the documented wire bytes", () => {
    const req = encodeStartRequest({
      command: { cmd: "a", args: ["b"], envs: { K: "v" }, cwd: "/" },
    });
    assert.deepEqual(
      [...req],
      [
        0x0a,
        0x11, // command (field 1, 17 bytes)
        0x0a,
        0x01,
        0x61, // cmd "a"
        0x12,
        0x01,
        0x62, // args "b"
        0x1a,
        0x06,
        0x0a,
        0x01,
        0x4b,
        0x12,
        0x01,
        0x76, // envs {K: v}
        0x22,
        0x01,
        0x2f, // cwd "/"
      ],
    );
    // end{exit_code: -1 (sint32 zigzag 1), exited: true}
    const end = new Uint8Array([0x0a, 0x06, 0x1a, 0x04, 0x08, 0x01, 0x10, 0x01]);
    assert.deepEqual([
      ...encodeSessionEvent({ kind: "end", exitCode: -1, exited: true, status: "" }),
    ], [
      ...end,
    ], "the fake's encoder writes the same bytes");
    assert.deepEqual(decodeStartResponse(end), {
      kind: "end",
      exitCode: -1,
      exited: true,
      status: "",
    });
    // unknown fields are skipped
    assert.deepEqual(decodeStartResponse(new Uint8Array([0x10, 0x05, 0x0a, 0x02, 0x22, 0x00])), {
      kind: "keepalive",
    });
  });
});
