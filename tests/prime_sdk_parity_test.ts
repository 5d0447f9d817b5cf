/**
 * Our Prime client against our Prime fake, held to the official SDK: every divergence once
 * found between them (one test each), and the SDK's own tests ported with the same inputs
 * and outcomes (`packages/prime-sandboxes/tests/*.py@66fb4b70`; our error types where the
 * SDK raises its own: PrimeNotRunningError for SandboxNotRunningError and its OOM/timeout/
 * image-pull subclasses, PrimeCommandTimeoutError for CommandTimeoutError, PrimeApiError
 * for APIError, a null read for SandboxFileNotFoundError).
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { type PrimeFake, type PrimeFakeOptions, startPrimeFake } from "./fakes/prime_server.ts";
import { SandboxError } from "../kit/errors.ts";
import { PrimeClient } from "../plugins/runtimes/prime/client.ts";
import { parseExpiry } from "../plugins/runtimes/prime/gateway_auth.ts";
import { resolvePrimeConfig } from "../plugins/runtimes/prime/config.ts";
import {
  DEFAULT_CREATION_TIMING,
  isRetryableProbeError,
  waitForCreation,
} from "../plugins/runtimes/prime/creation.ts";
import {
  PrimeApiError,
  PrimeCommandTimeoutError,
  PrimeConnectError,
  PrimeCreationTimeoutError,
  PrimeNotRunningError,
} from "../plugins/runtimes/prime/errors.ts";
import { PrimeRuntime } from "../plugins/runtimes/prime/runtime.ts";
import { StatusPoller } from "../plugins/runtimes/prime/status_poller.ts";
import { at } from "./_assert.ts";
import { useOwnCacheDir } from "./_cache_dir.ts";

const TIMING = {
  ...DEFAULT_CREATION_TIMING,
  budgetMs: 1500,
  baseDelayMs: 5,
  maxDelayMs: 20,
  imageBuildPollMs: 10,
  probeTimeoutS: 5,
};

let fake: PrimeFake;
useOwnCacheDir("vf-prime-parity-");
let seq = 0;
const clients: PrimeClient[] = [];

function clientFor(on: PrimeFake = fake, teamId: string | null = null): PrimeClient {
  const c = new PrimeClient(
    { baseUrl: on.url, apiKey: on.apiKey, teamId },
    { backoffScale: 0.001 },
  );
  clients.push(c);
  return c;
}

/** A new sandbox, RUNNING (the fake's first status read starts it). */
async function running(
  c: PrimeClient,
  body: Record<string, unknown> = {},
): Promise<string> {
  const rec = await c.createSandbox({
    name: `sdk-parity-${++seq}`,
    docker_image: "python:3.11-slim",
    timeout_minutes: 600,
    ...body,
  });
  assert.equal((await c.getSandbox(rec.id)).status, "RUNNING");
  return rec.id;
}

/** A client whose requests are counted as they leave it (by URL suffix). */
function countingClient(on: PrimeFake = fake) {
  const urls: string[] = [];
  const client = new PrimeClient({ baseUrl: on.url, apiKey: on.apiKey, teamId: null }, {
    backoffScale: 0.001,
    fetch: (input, init) => {
      urls.push(input.split("?")[0] ?? input);
      return fetch(input, init);
    },
  });
  clients.push(client);
  return {
    client,
    calls: (suffix?: string) =>
      urls.filter((u) => suffix === undefined ? !u.endsWith("/auth") : u.endsWith(suffix)).length,
  };
}

/** Requests of a kind after `mark`. */
function since(mark: number, kind: string, on: PrimeFake = fake) {
  return on.requests.slice(mark).filter((r) => r.kind === kind);
}

async function withFake<T>(options: PrimeFakeOptions, fn: (f: PrimeFake) => Promise<T>) {
  const f = await startPrimeFake(options);
  try {
    return await fn(f);
  } finally {
    await f.close();
  }
}

function runtimeOn(on: PrimeFake, config: Record<string, unknown> = {}): PrimeRuntime {
  return new PrimeRuntime(resolvePrimeConfig(config), `sdk-parity-rt-${++seq}`, {
    settings: { baseUrl: on.url, apiKey: on.apiKey, teamId: null },
    creation: TIMING,
    client: { backoffScale: 0.001 },
    timing: { jobPollStartMs: 10, jobPollMaxMs: 100, outageBaseMs: 10, outageMaxMs: 50 },
  });
}

const notRunning = (errorType: string | null, pattern?: RegExp) => (e: unknown) => {
  assert.ok(e instanceof PrimeNotRunningError, `expected PrimeNotRunningError, got ${e}`);
  assert.equal(e.errorType, errorType);
  if (pattern) assert.match(e.message, pattern);
  return true;
};

before(async () => {
  // no connection reuse: a runtime's fetch may resend a request by itself when a reused
  // connection closes before the answer, which would blur the counts of retries
  fake = await startPrimeFake({ keepAlive: false });
});

after(async () => {
  for (const c of clients) c.close();
  await fake.close();
});

describe("prime client: each divergence from the SDK, settled", () => {
  it("a read-file 404 with the gateway's error-code body is a missing file (run() of sleep 1)", async () => {
    const rt = runtimeOn(fake);
    await rt.start();
    try {
      const mark = fake.requests.length;
      const r = await rt.run(["bash", "-c", "sleep 1; echo hello"]);
      assert.deepEqual(r, { exitCode: 0, stdout: "hello\n", stderr: "" });
      const misses = since(mark, "read-file").length;
      assert.ok(misses >= 3, `the exit file was polled before it existed (${misses} reads)`);
    } finally {
      await rt.stopConfirmed();
    }
  });

  it("1. a 409 on read-file, upload and download asks /error-context and retries while RUNNING", async () => {
    const c = clientFor();
    const id = await running(c);
    await c.exec(id, "echo hi > /tmp/f");
    for (const kind of ["read-file", "upload", "download"] as const) {
      fake.fault({ kind, respond: { status: 409, body: { detail: "Sandbox is busy" } }, times: 2 });
    }
    const mark = fake.requests.length;
    assert.equal((await c.readFile(id, "/tmp/f"))?.content, "hi\n");
    await c.upload(id, "/tmp/g", new TextEncoder().encode("up"));
    assert.equal(new TextDecoder().decode(await c.download(id, "/tmp/g")), "up");
    assert.equal(since(mark, "error-context").length, 6, "one context question per 409");
    assert.equal(since(mark, "read-file").length, 3);
    assert.equal(since(mark, "upload").length, 3);
    assert.equal(since(mark, "download").length, 3);
  });

  it("1b. a 409 while the sandbox is not running is a typed not-running error", async () => {
    await withFake({ readsUntilRunning: 50 }, async (f) => {
      const c = clientFor(f);
      const rec = await c.createSandbox({ name: "pending", docker_image: "img" });
      await c.getSandbox(rec.id); // PENDING: the gateway answers 409
      await assert.rejects(c.readFile(rec.id, "/tmp/x"), notRunning(null, /PENDING/));
      assert.equal(f.count("error-context"), 1);
    });
  });

  it("2. a sandbox that dies after RUNNING fails the creation wait at once with its cause", async () => {
    await withFake({ dieAfterRunning: { "oom:1": "OOM_KILLED" } }, async (f) => {
      const c = clientFor(f);
      const rec = await c.createSandbox({ name: "dies", docker_image: "oom:1" });
      await assert.rejects(
        waitForCreation(c, new StatusPoller(c), rec.id, TIMING),
        notRunning("OOM_KILLED", /ERROR/),
      );
      assert.equal(f.count("exec"), 1, "one probe, then the status says why");
    });
  });

  it("3. gateway not-found names the cause /error-context gives (OOM, lifetime, image pull)", async () => {
    const c = clientFor();
    const cases: [string, string, RegExp][] = [
      ["OOM_KILLED", "ERROR", /out-of-memory/],
      ["TIMEOUT", "TIMEOUT", /maximum runtime/],
      ["IMAGE_PULL_FAILED", "ERROR", /image pull/],
    ];
    for (const [errorType, status, reason] of cases) {
      const id = await running(c);
      fake.kill(id, { status, errorType });
      await assert.rejects(c.exec(id, "true"), notRunning(errorType, reason));
    }
  });

  it("3b. a failing /error-context leaves the 409 being classified, with an empty context", async () => {
    const c = clientFor();
    const id = await running(c);
    fake.fault({ kind: "exec", respond: { status: 409, body: { detail: "conflict" } } });
    fake.fault({ kind: "error-context", respond: { status: 500, body: { detail: "boom" } } });
    await assert.rejects(c.exec(id, "true"), (e: unknown) => {
      assert.ok(e instanceof PrimeNotRunningError, String(e));
      assert.equal(e.httpStatus, 409, "the 409 is kept, not replaced by the 500");
      assert.equal(e.status, "UNKNOWN");
      return true;
    });
  });

  it("4a. the VM command session sends stdin=false, as the SDK always does", async () => {
    const c = clientFor();
    const id = await running(c, { vm: true });
    const mark = fake.requests.length;
    assert.equal((await c.exec(id, "echo vm")).stdout, "vm\n");
    assert.deepEqual(since(mark, "connect-start").map((r) => r.connectStdin), [false]);
  });

  it("4b. an error on the end event is ignored: the exit code is the answer", async () => {
    await withFake({ endEventError: "session cleanup failed" }, async (f) => {
      const c = clientFor(f);
      const id = await running(c, { vm: true });
      assert.deepEqual(await c.exec(id, "echo out; exit 3"), {
        stdout: "out\n",
        stderr: "",
        exitCode: 3,
      });
    });
  });

  it("4c. Connect not_found answered as HTTP 404 keeps a VM creation wait polling", async () => {
    await withFake({ gatewayLag: 2 }, async (f) => {
      const c = clientFor(f);
      const rec = await c.createSandbox({ name: "vm", docker_image: "img", vm: true });
      await waitForCreation(c, new StatusPoller(c), rec.id, TIMING);
      assert.equal(f.count("connect-start"), 3, "two refusals (HTTP 404), then the probe ran");
    });
  });

  it("4d. sendSignal re-authenticates once after an expired token", async () => {
    const c = clientFor();
    const id = await running(c, { vm: true });
    await c.auth(id);
    fake.clock.advance(2 * 3_600_000); // the cached token expired at the gateway
    const mark = fake.requests.length;
    await assert.rejects(c.sendSignal(id, 999_999, 15), (e: unknown) => {
      assert.ok(e instanceof PrimeConnectError, String(e));
      assert.equal(e.connectCode, "not_found", "past the auth: no such process");
      return true;
    });
    assert.equal(since(mark, "auth").length, 1);
    assert.equal(since(mark, "connect-send-signal").length, 2);
  });

  it("5a. uploads retry only 408/500/502/503/504/524: a 501 fails at once", async () => {
    const c = clientFor();
    const id = await running(c);
    const mark = fake.requests.length;
    fake.fault({ kind: "upload", respond: { status: 501, body: { detail: "no" } } });
    await assert.rejects(c.upload(id, "/tmp/u", new Uint8Array([1])), /HTTP 501/);
    assert.equal(since(mark, "upload").length, 1);
  });

  it("5b. a disconnect before any answer is retried for POSTs (exec, expose)", async () => {
    const c = clientFor();
    const id = await running(c);
    const mark = fake.requests.length;
    fake.fault({ kind: "exec", reset: true });
    fake.fault({ kind: "expose", reset: true });
    assert.equal((await c.exec(id, "echo again")).stdout, "again\n");
    assert.match(await c.expose(id, 8080), /^https:\/\//);
    assert.equal(since(mark, "exec").length, 2);
    assert.equal(since(mark, "expose").length, 2);
  });

  it("6. batch status unsupported: one sandbox's failed lookup fails its waiter only", async () => {
    await withFake({ batchUnsupported: true }, async (f) => {
      const c = clientFor(f);
      const a = (await c.createSandbox({ name: "a", docker_image: "img" })).id;
      const b = (await c.createSandbox({ name: "b", docker_image: "img" })).id;
      f.fault({
        kind: "get",
        path: new RegExp(b),
        respond: { status: 500, body: { detail: "x" } },
      });
      const poller = new StatusPoller(c);
      const [ra, rb] = await Promise.allSettled([poller.poll(a, 0), poller.poll(b, 0)]);
      assert.equal(ra.status, "fulfilled");
      assert.equal(ra.status === "fulfilled" && ra.value.kind, "status");
      assert.equal(rb.status, "rejected");
      assert.equal(rb.status === "rejected" && (rb.reason as PrimeApiError).httpStatus, 500);
      assert.equal(poller.rounds, 1);
    });
  });

  it("7a. a token expiry without a time zone is UTC", () => {
    assert.equal(parseExpiry("2026-03-01T10:00:00"), Date.UTC(2026, 2, 1, 10));
    assert.equal(parseExpiry("2026-03-01T10:00:00.250"), Date.UTC(2026, 2, 1, 10, 0, 0, 250));
    assert.equal(parseExpiry("2026-03-01T10:00:00Z"), Date.UTC(2026, 2, 1, 10));
    assert.equal(parseExpiry("2026-03-01T10:00:00+02:00"), Date.UTC(2026, 2, 1, 8));
    assert.ok(Number.isNaN(parseExpiry(null)));
  });

  it("7b. expose on a VM fails with the SDK's message and sends nothing", async () => {
    const c = clientFor();
    const id = await running(c, { vm: true });
    const mark = fake.requests.length;
    await assert.rejects(c.expose(id, 8080), /Port exposure is not yet supported for VM sandboxes/);
    assert.equal(since(mark, "expose").length, 0);
  });

  it("7c. the gateway auth request has no body", async () => {
    const c = clientFor();
    const id = await running(c);
    const mark = fake.requests.length;
    await c.auth(id, { force: true });
    const auth = at(since(mark, "auth"), 0);
    assert.equal(auth.method, "POST");
    assert.equal(auth.bodyBytes, 0);
  });
});

describe("ported: test_gateway_error_mapping.py", () => {
  it("execute_command maps the gateway's 502 sandbox_not_found to not running", async () => {
    const c = clientFor();
    const id = await running(c);
    fake.fault({
      kind: "exec",
      respond: {
        status: 502,
        body: {
          error: "sandbox_not_found",
          sandboxId: id,
          message: "The sandbox was not found",
          code: 502,
        },
      },
    });
    // error-context says RUNNING (the fake's sandbox runs): still not running, SANDBOX_NOT_FOUND
    await assert.rejects(c.exec(id, "ls /"), notRunning("SANDBOX_NOT_FOUND", /no longer running/));
  });

  it("a generic gateway 502 is not mapped to not running", async () => {
    const c = clientFor();
    const id = await running(c);
    fake.fault({
      kind: "exec",
      respond: {
        status: 502,
        body: { error: "gateway_error", message: "Failed to route request to sandbox", code: 502 },
      },
    });
    await assert.rejects(c.exec(id, "ls /"), (e: unknown) => {
      assert.ok(e instanceof PrimeApiError && !(e instanceof PrimeNotRunningError));
      assert.doesNotMatch(e.message.toLowerCase(), /no longer running/);
      return true;
    });
  });
});

describe("ported: test_client_retry.py", () => {
  let c: PrimeClient;
  let id = "";
  before(async () => {
    c = clientFor();
    id = await running(c);
  });

  it("retries a disconnect twice and succeeds on the third call", async () => {
    const mark = fake.requests.length;
    fake.fault({ kind: "get", reset: true, times: 2 });
    assert.equal((await c.getSandbox(id)).id, id);
    assert.equal(since(mark, "get").length, 3);
  });

  it("gives up after 3 attempts", async () => {
    // attempts are counted at the client: Deno's fetch may itself resend a request whose
    // pooled connection closed before the answer, so the server can see more
    const counted = countingClient();
    fake.fault({ kind: "get", reset: true, times: 100 });
    try {
      await assert.rejects(counted.client.getSandbox(id), (e: unknown) => {
        assert.ok(e instanceof PrimeApiError && e.transport === "network", String(e));
        return true;
      });
    } finally {
      fake.clearFaults();
    }
    assert.equal(counted.calls(), 3);
  });

  it("GET retries a read error", async () => {
    const mark = fake.requests.length;
    fake.fault({ kind: "get", readError: true });
    assert.equal((await c.getSandbox(id)).id, id);
    assert.equal(since(mark, "get").length, 2);
  });

  for (const status of [502, 503, 504]) {
    it(`GET and idempotent POSTs retry ${status}; a plain POST does not`, async () => {
      const mark = fake.requests.length;
      fake.fault({ kind: "get", respond: { status, body: { detail: "busy" } } });
      fake.fault({ kind: "batch", respond: { status, body: { detail: "busy" } } });
      fake.fault({ kind: "expose", respond: { status, body: { detail: "busy" } } });
      await c.getSandbox(id);
      await c.batchStatus([id]);
      await assert.rejects(c.expose(id, 80), new RegExp(`HTTP ${status}`));
      assert.equal(since(mark, "get").length, 2);
      assert.equal(since(mark, "batch").length, 2);
      assert.equal(since(mark, "expose").length, 1);
    });
  }

  it("a plain POST does not retry a read error; an idempotent POST does", async () => {
    const mark = fake.requests.length;
    fake.fault({ kind: "expose", readError: true });
    await assert.rejects(c.expose(id, 80), (e: unknown) => {
      assert.ok(e instanceof PrimeApiError && e.phase === "read", String(e));
      return true;
    });
    fake.fault({ kind: "batch", readError: true });
    await c.batchStatus([id]);
    assert.equal(since(mark, "expose").length, 1);
    assert.equal(since(mark, "batch").length, 2);
  });

  it("a 404 is not retried", async () => {
    const mark = fake.requests.length;
    await assert.rejects(c.getSandbox("no-such-sandbox"), /HTTP 404/);
    assert.equal(since(mark, "get").length, 1);
  });

  it("create sends a fresh idempotency key per call and the configured team", async () => {
    const teamClient = clientFor(fake, "team-1");
    const mark = fake.requests.length;
    const request = { name: "idem", docker_image: "img" };
    await teamClient.createSandbox(request);
    await teamClient.createSandbox(request);
    const creates = since(mark, "create").map((r) => r.json as Record<string, unknown>);
    const first = at(creates, 0);
    const second = at(creates, 1);
    assert.notEqual(first.idempotency_key, second.idempotency_key);
    assert.equal(first.team_id, "team-1");
    assert.equal(second.team_id, "team-1");
    assert.deepEqual(request, { name: "idem", docker_image: "img" }, "the request is not changed");
  });

  it("the auth refresh retries a transient 502", async () => {
    const mark = fake.requests.length;
    fake.fault({ kind: "auth", respond: { status: 502, body: { detail: "bad gateway" } } });
    assert.ok((await c.auth(id, { force: true })).token);
    const auths = since(mark, "auth");
    assert.deepEqual(auths.map((r) => r.method), ["POST", "POST"]);
    assert.match(at(auths, 0).path, new RegExp(`/api/v1/sandbox/${id}/auth$`));
  });

  it("gateway GET retries 500/502/503/504/524, gives up after 4, never on sandbox_not_found or 404", async () => {
    await c.exec(id, "echo x > /tmp/dl");
    for (const status of [500, 502, 503, 504, 524]) {
      const mark = fake.requests.length;
      fake.fault({ kind: "download", respond: { status, body: { detail: "x" } }, times: 2 });
      await c.download(id, "/tmp/dl");
      assert.equal(since(mark, "download").length, 3, `status ${status}`);
    }
    let mark = fake.requests.length;
    fake.fault({ kind: "download", respond: { status: 503, body: {} }, times: 4 });
    await assert.rejects(c.download(id, "/tmp/dl"), /HTTP 503/);
    assert.equal(since(mark, "download").length, 4);
    mark = fake.requests.length;
    fake.fault({
      kind: "download",
      respond: { status: 502, body: { error: "sandbox_not_found", code: 502 } },
    });
    await assert.rejects(c.download(id, "/tmp/dl"), notRunning("SANDBOX_NOT_FOUND"));
    assert.equal(since(mark, "download").length, 1, "permanent: no retry");
    mark = fake.requests.length;
    await assert.rejects(c.download(id, "/tmp/none"), /HTTP 404/);
    assert.equal(since(mark, "download").length, 1);
  });

  it("gateway GET retries a read error and a disconnect", async () => {
    const mark = fake.requests.length;
    fake.fault({ kind: "download", readError: true });
    fake.fault({ kind: "download", reset: true });
    assert.equal(new TextDecoder().decode(await c.download(id, "/tmp/dl")), "x\n");
    assert.equal(since(mark, "download").length, 3);
  });

  it("gateway POST retries disconnects up to 4 attempts, never 5xx, 524 or a read error", async () => {
    let mark = fake.requests.length;
    fake.fault({ kind: "exec", reset: true, times: 2 });
    assert.equal((await c.exec(id, "echo ok")).stdout, "ok\n");
    assert.equal(since(mark, "exec").length, 3);
    const counted = countingClient();
    await counted.client.auth(id);
    fake.fault({ kind: "exec", reset: true, times: 100 });
    try {
      await assert.rejects(counted.client.exec(id, "echo ok"));
    } finally {
      fake.clearFaults();
    }
    assert.equal(counted.calls("/exec"), 4, "4 attempts, counted at the client");
    for (const status of [502, 524]) {
      mark = fake.requests.length;
      fake.fault({ kind: "exec", respond: { status, body: { detail: "x" } } });
      await assert.rejects(c.exec(id, "echo ok"), new RegExp(`HTTP ${status}`));
      assert.equal(since(mark, "exec").length, 1);
    }
    mark = fake.requests.length;
    fake.fault({ kind: "exec", readError: true });
    await assert.rejects(c.exec(id, "echo ok"));
    assert.equal(since(mark, "exec").length, 1);
  });

  it("read-file retries a read timeout; when every attempt times out it names the file", async () => {
    let mark = fake.requests.length;
    fake.fault({ kind: "read-file", delayMs: 1500 });
    await c.readFile(id, "/tmp/dl", { timeoutS: 0.5 });
    assert.equal(since(mark, "read-file").length, 2);
    mark = fake.requests.length;
    fake.fault({ kind: "read-file", delayMs: 1500, times: 4 });
    await assert.rejects(
      c.readFile(id, "/tmp/job.exit", { timeoutS: 0.2 }),
      /Read file timed out after 0\.2s: \/tmp\/job\.exit/,
    );
    assert.equal(since(mark, "read-file").length, 4);
  });
});

describe("ported: test_creation_reachability.py", () => {
  it("a local failure of the probe surfaces at once, unretried", async () => {
    // the gateway's answer cannot be decoded here (a local codec failure, as the SDK's
    // `to_binary` defect): one probe, no retry, the decoder's own error
    const garbage = new Uint8Array([0, 0, 0, 0, 1, 0x0f]);
    const c = new PrimeClient({ baseUrl: fake.url, apiKey: fake.apiKey, teamId: null }, {
      backoffScale: 0.001,
      fetch: (input, init) =>
        input.endsWith("/command_session.CommandSession/Start")
          ? Promise.resolve(
            new Response(garbage, { headers: { "content-type": "application/connect+proto" } }),
          )
          : fetch(input, init),
    });
    clients.push(c);
    const rec = await c.createSandbox({ name: "codec", docker_image: "img", vm: true });
    const mark = fake.requests.length;
    await assert.rejects(waitForCreation(c, new StatusPoller(c), rec.id, TIMING), (e) => {
      assert.ok(!(e instanceof PrimeApiError), String(e));
      assert.ok(!isRetryableProbeError(e));
      return true;
    });
    assert.equal(since(mark, "batch").length, 1, "no second round");
  });

  it("reports the last transient reachability error when the budget runs out", async () => {
    const c = clientFor();
    const rec = await c.createSandbox({ name: "unreachable", docker_image: "img" });
    fake.fault({
      kind: "exec",
      respond: { status: 503, body: { detail: "connection reset" } },
      times: 10_000,
    });
    try {
      await assert.rejects(
        waitForCreation(c, new StatusPoller(c), rec.id, { ...TIMING, budgetMs: 300 }),
        (e: unknown) => {
          assert.ok(e instanceof PrimeCreationTimeoutError, String(e));
          assert.equal(e.errorType, "GATEWAY_REACHABILITY_TIMEOUT");
          assert.match(e.message, /RUNNING/);
          assert.match(e.message, /connection reset/);
          assert.ok(e.cause instanceof PrimeApiError && e.cause.httpStatus === 503);
          return true;
        },
      );
    } finally {
      fake.clearFaults();
    }
  });

  for (const vm of [false, true]) {
    it(`retries the gateway's not-found during reachability (${vm ? "Connect 404" : "HTTP 502"})`, async () => {
      await withFake({ gatewayLag: 1 }, async (f) => {
        const c = clientFor(f);
        const rec = await c.createSandbox({ name: "lag", docker_image: "img", vm });
        await waitForCreation(c, new StatusPoller(c), rec.id, TIMING);
        assert.equal(f.count(vm ? "connect-start" : "exec"), 2);
      });
    });
  }
});

describe("ported: test_batch_status.py", () => {
  it("concurrent creation waits share one idempotent status:batchGet", async () => {
    const c = clientFor();
    const a = (await c.createSandbox({ name: "a", docker_image: "img" })).id;
    const b = (await c.createSandbox({ name: "b", docker_image: "img" })).id;
    const mark = fake.requests.length;
    const poller = new StatusPoller(c);
    await Promise.all([a, b].map((id) => waitForCreation(c, poller, id, TIMING)));
    const batches = since(mark, "batch");
    assert.equal(batches.length, 1);
    assert.equal(at(batches, 0).method, "POST");
    assert.equal(at(batches, 0).path, "/api/v1/sandbox/status:batchGet");
    assert.deepEqual(
      new Set((at(batches, 0).json as { sandbox_ids: string[] }).sandbox_ids),
      new Set([a, b]),
    );
  });

  it("a batch error fails only the matching waiter", async () => {
    const c = clientFor();
    const a = (await c.createSandbox({ name: "a", docker_image: "img" })).id;
    const mark = fake.requests.length;
    const poller = new StatusPoller(c);
    const [ra, rb] = await Promise.allSettled([
      waitForCreation(c, poller, a, TIMING),
      waitForCreation(c, poller, "sandbox-b", TIMING),
    ]);
    assert.equal(ra.status, "fulfilled");
    assert.equal(rb.status, "rejected");
    assert.match(String((rb as PromiseRejectedResult).reason), /sandbox-b.*NOT_FOUND/);
    assert.equal(since(mark, "batch").length, 1);
  });

  for (const status of [404, 405] as const) {
    it(`batch capability (${status}) falls back once per client`, async () => {
      await withFake({ batchUnsupported: status }, async (f) => {
        const c = clientFor(f);
        const a = (await c.createSandbox({ name: "a", docker_image: "img" })).id;
        for (let i = 0; i < 2; i++) {
          assert.equal((await c.batchStatus([a])).statuses.get(a)?.status, "RUNNING");
        }
        assert.equal(f.count("batch"), 1);
        assert.equal(f.count("get"), 2);
      });
    });
  }
});

describe("ported: test_file_operations.py", () => {
  let c: PrimeClient;
  let id = "";
  const enc = new TextEncoder();
  before(async () => {
    c = clientFor();
    id = await running(c);
  });

  it("uploads a text file that a command then reads", async () => {
    const text = "Hello from test!\nLine 2\nLine 3";
    await c.upload(id, "/tmp/test_upload.txt", enc.encode(text));
    const r = await c.exec(id, "cat /tmp/test_upload.txt");
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout.trim(), text);
  });

  it("uploads and downloads the same bytes", async () => {
    const text = "Upload and download test\nMultiple lines\n123456";
    await c.upload(id, "/tmp/test_roundtrip.txt", enc.encode(text));
    assert.equal(new TextDecoder().decode(await c.download(id, "/tmp/test_roundtrip.txt")), text);
  });

  it("uploads binary bytes (all 256 values) and bytes with an emoji", async () => {
    const bin = new Uint8Array(256).map((_, i) => i);
    await c.upload(id, "/tmp/test_binary.bin", bin);
    const r = await c.exec(id, "wc -c < /tmp/test_binary.bin");
    assert.equal(Number(r.stdout.trim()), 256);
    assert.deepEqual(await c.download(id, "/tmp/test_binary.bin"), bin);
    const text = "Hello from bytes!\nLine 2\nLine 3\n🚀";
    await c.upload(id, "/tmp/test_upload_bytes.txt", enc.encode(text));
    assert.equal((await c.exec(id, "cat /tmp/test_upload_bytes.txt")).stdout, text);
  });

  it("downloading a missing file is an API error", async () => {
    await assert.rejects(c.download(id, "/tmp/nonexistent_file.txt"), (e: unknown) => {
      assert.ok(e instanceof PrimeApiError && e.httpStatus === 404);
      return true;
    });
  });

  it("uploads a script and runs it", async () => {
    await c.upload(
      id,
      "/tmp/test_script.sh",
      enc.encode('#!/bin/sh\necho "Hello from uploaded script!"\n'),
    );
    await c.exec(id, "chmod +x /tmp/test_script.sh");
    const r = await c.exec(id, "/tmp/test_script.sh");
    assert.equal(r.exitCode, 0);
    assert.match(r.stdout, /Hello from uploaded script!/);
  });

  it("reading a missing file resolves to null; a VM read has the legacy shape", async () => {
    assert.equal(await c.readFile(id, "/tmp/nope"), null);
    const vm = await running(c, { vm: true });
    await c.exec(vm, "printf out > /tmp/job.stdout");
    const r = await c.readFile(vm, "/tmp/job.stdout", { offset: -10, length: 10 });
    assert.deepEqual(r, {
      content: "out",
      size: 3,
      totalSize: null,
      offset: null,
      truncated: false,
    });
  });
});

describe("ported: test_command_execution.py, test_cmd_timeout.py", () => {
  for (const vm of [false, true]) {
    describe(vm ? "VM (command session)" : "container (exec)", () => {
      let c: PrimeClient;
      let id = "";
      before(async () => {
        c = clientFor();
        id = await running(c, { vm });
      });

      it("working directory", async () => {
        await c.exec(id, "mkdir -p /tmp/workdir && touch /tmp/workdir/file.txt");
        const r = await c.exec(id, "pwd && ls", { cwd: "/tmp/workdir" });
        assert.equal(r.exitCode, 0);
        assert.match(r.stdout, /\/tmp\/workdir/);
        assert.match(r.stdout, /file\.txt/);
      });

      it("environment variables", async () => {
        const r = await c.exec(id, "echo $TEST_VAR $ANOTHER_VAR $CUSTOM_PATH", {
          env: { TEST_VAR: "hello_world", ANOTHER_VAR: "12345", CUSTOM_PATH: "/custom/path" },
        });
        assert.equal(r.exitCode, 0);
        assert.equal(r.stdout, "hello_world 12345 /custom/path\n");
      });

      it("exit codes", async () => {
        for (const code of [0, 1, 2, 42, 127]) {
          assert.equal((await c.exec(id, `exit ${code}`)).exitCode, code);
        }
      });

      it("stdout and stderr apart, multiline output, pipes and redirection", async () => {
        const r = await c.exec(id, "echo 'stdout message'; echo 'stderr message' >&2");
        assert.equal(r.stdout, "stdout message\n");
        assert.equal(r.stderr, "stderr message\n");
        const lines = (await c.exec(id, 'for i in 1 2 3 4 5; do echo "Line $i"; done')).stdout;
        assert.deepEqual(lines.trim().split("\n"), [1, 2, 3, 4, 5].map((i) => `Line ${i}`));
        const p = await c.exec(
          id,
          "echo 'hello world' | tr a-z A-Z > /tmp/output.txt && cat /tmp/output.txt",
        );
        assert.equal(p.stdout, "HELLO WORLD\n");
        assert.equal((await c.exec(id, "cat /tmp/output.txt")).stdout, "HELLO WORLD\n");
      });

      it("a command longer than a poll completes (sleep, then done)", async () => {
        const r = await c.exec(id, "sleep 1 && echo 'done'", { timeoutS: 10 });
        assert.deepEqual(r, { exitCode: 0, stdout: "done\n", stderr: "" });
      });

      it("a command past its timeout is a command timeout naming the sandbox", async () => {
        await assert.rejects(c.exec(id, "sleep 10", { timeoutS: 1 }), (e: unknown) => {
          assert.ok(e instanceof PrimeCommandTimeoutError, String(e));
          assert.match(e.message, new RegExp(id));
          return true;
        });
      });
    });
  }
});

describe("ported: test_vm_guards.py", () => {
  it("expose is blocked for a VM before any request and allowed for a container", async () => {
    const c = clientFor();
    const vm = await running(c, { vm: true });
    const box = await running(c);
    const mark = fake.requests.length;
    await assert.rejects(c.expose(vm, 80), (e: unknown) => {
      assert.match(String(e), /Port exposure/);
      assert.match(String(e), /VM sandboxes/);
      return true;
    });
    assert.equal(since(mark, "expose").length, 0);
    assert.match(await c.expose(box, 80), /^https:/);
    assert.equal(since(mark, "expose").length, 1);
  });

  it("whether a sandbox is a VM is asked once on a cold cache, then cached", async () => {
    const c = clientFor();
    const vm = await running(c, { vm: true });
    const cold = clientFor();
    const mark = fake.requests.length;
    assert.equal((await cold.exec(vm, "echo 1")).stdout, "1\n");
    assert.equal((await cold.exec(vm, "echo 2")).stdout, "2\n");
    assert.equal(since(mark, "get").length, 1);
    assert.equal(since(mark, "connect-start").length, 2);
  });
});

describe("a run on a sandbox that the SDK would call OOM", () => {
  it("start() fails with the OOM hint, not a reachability timeout", async () => {
    await withFake({ dieAfterRunning: { "oom:2": "OOM_KILLED" } }, async (f) => {
      const rt = runtimeOn(f, { image: "oom:2" });
      await assert.rejects(rt.start(), (e: unknown) => {
        assert.ok(e instanceof SandboxError, String(e));
        assert.match(e.message, /OOM_KILLED/);
        assert.match(e.hint ?? "", /memory/);
        return true;
      });
      await rt.stopConfirmed();
    });
  });
});
