/**
 * The official Modal JS SDK (`modal@0.7.2`, a dev dependency) as the judge of our Modal
 * fake and of our own Modal client: the SDK drives a whole sandbox lifecycle against the
 * fake (app, registry image, sandbox with a timeout, exec with stdout/stderr, exec with
 * stdin, a non-zero exit, env, tunnels, terminate, wait); our runtime does the same against
 * a second fake; every step's RPCs are compared on what the service can observe (method,
 * order, field numbers on the wire, decoded field values with ids normalized, metadata keys
 * and values). Negative tests switch one fake behaviour and expect the SDK to fail.
 *
 * The SDK runs for real under Node (its supported runtime; `node` is on every machine that
 * runs `npm ci`) in a child process driven line by line (tests/fixtures/modal_sdk), so this
 * file itself runs unchanged under `deno test` and `bun test`. (Under Deno 2.9 the SDK's
 * HTTP/2 stack, grpc-js, can crash the whole process inside nghttp2 when a connection
 * closes; Node is where the SDK is meant to run.)
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import {
  closeModalConnections,
  ModalRuntime,
  ModalRuntimeConfig,
  sharedModalApi,
} from "../plugins/runtimes/modal/mod.ts";
import { resolveModalProfile } from "../plugins/runtimes/modal/profile.ts";
import { SandboxError } from "../kit/errors.ts";
import * as M from "../plugins/runtimes/modal/messages.ts";
import { Code, startModalFake } from "./fakes/modal_server.ts";
import type { ModalFake, RecordedCall } from "./fakes/modal_server.ts";
import { setupModalEnv } from "./fakes/modal_env.ts";
import type { ModalTestEnv } from "./fakes/modal_env.ts";

const ROOT = join(import.meta.dirname!, "..");
const DRIVER = join(import.meta.dirname!, "fixtures", "modal_sdk", "driver.mjs");

/** Headers that name the client library itself, not anything the protocol defines. */
const LIBRARY_HEADERS = new Set(["user-agent"]);
/** Headers compared by presence only (their values legitimately differ; see below). */
const KEY_ONLY_HEADERS = new Set(["grpc-accept-encoding"]);

const ID = /^(ap|im|sb|ta|st)-[0-9a-f]{20}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Replaces server-minted ids, uuids and tokens by placeholders, deeply. */
function normalizeValue(v: unknown): unknown {
  if (typeof v === "string") {
    const id = ID.exec(v);
    if (id) return `<${id[1]}>`;
    if (UUID.test(v)) return "<uuid>";
    if (JWT.test(v)) return "<jwt>";
    if (v.startsWith("Bearer ") && JWT.test(v.slice(7))) return "Bearer <jwt>";
    return v;
  }
  if (v instanceof Uint8Array) return `bytes:${new TextDecoder().decode(v)}`;
  if (Array.isArray(v)) return v.map(normalizeValue);
  if (v && typeof v === "object") {
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalizeValue(x)]));
  }
  return v;
}

/** What the service can observe of one call, normalized for comparison. */
function observe(c: RecordedCall): Record<string, unknown> {
  const metadata: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(c.metadata)) {
    if (LIBRARY_HEADERS.has(k)) continue;
    metadata[k] = KEY_ONLY_HEADERS.has(k) ? "<present>" : normalizeValue(v);
  }
  return {
    method: c.method,
    service: c.service,
    wire: c.wire,
    metadata,
    request: normalizeValue(c.request),
    status: c.status,
  };
}

const RANK = [
  "SecretGetOrCreate",
  "TaskExecStart",
  "TaskExecStdinWrite",
  "TaskExecStdioRead",
  "TaskExecWait",
];

/** Calls made concurrently in an exec, in a canonical order (method, fd, offset). */
function canonical(calls: RecordedCall[]): RecordedCall[] {
  const key = (c: RecordedCall) => [
    RANK.indexOf(c.method),
    Number(c.request.fileDescriptor ?? 0),
    Number(c.request.offset ?? 0),
  ];
  return [...calls].sort((a, b) => {
    const [x, y] = [key(a), key(b)];
    return x[0]! - y[0]! || x[1]! - y[1]! || x[2]! - y[2]!;
  });
}

function assertSameCalls(step: string, ours: RecordedCall[], sdk: RecordedCall[]): void {
  assert.deepEqual(
    ours.map((c) => c.method),
    sdk.map((c) => c.method),
    `${step}: the same RPCs in the same order`,
  );
  for (let i = 0; i < sdk.length; i++) {
    assert.deepEqual(observe(ours[i]!), observe(sdk[i]!), `${step}: call ${i} (${sdk[i]!.method})`);
  }
}

/** Runs `fn` and returns the calls `fake` received meanwhile. */
async function recorded<T>(fake: ModalFake, fn: () => Promise<T>): Promise<[T, RecordedCall[]]> {
  const mark = fake.calls.length;
  const value = await fn();
  return [value, fake.calls.slice(mark)];
}

/** The official SDK running under Node in a child process (tests/fixtures/modal_sdk). */
class SdkDriver {
  readonly #child: ChildProcessWithoutNullStreams;
  readonly #pending = new Map<
    number,
    (r: { ok: boolean; value?: unknown; error?: string }) => void
  >();
  #next = 0;
  stderr = "";

  constructor() {
    this.#child = spawn("node", [DRIVER], {
      cwd: ROOT,
      env: { ...process.env, MODAL_CONFIG_PATH: process.env.MODAL_CONFIG_PATH ?? "/nonexistent" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    this.#child.stderr.setEncoding("utf8").on("data", (d: string) => this.stderr += d);
    let buffer = "";
    this.#child.stdout.setEncoding("utf8").on("data", (d: string) => {
      buffer += d;
      let nl: number;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        const msg = JSON.parse(line) as {
          id: number;
          ok: boolean;
          value?: unknown;
          error?: string;
        };
        this.#pending.get(msg.id)?.(msg);
        this.#pending.delete(msg.id);
      }
    });
    this.#child.on("close", () => {
      for (const resolve of this.#pending.values()) {
        resolve({ ok: false, error: `the SDK driver exited:\n${this.stderr}` });
      }
      this.#pending.clear();
    });
  }

  /** Sends one command; resolves with its value, rejects with the SDK's error message. */
  call<T = unknown>(op: string, args: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.#next;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, (r) => r.ok ? resolve(r.value as T) : reject(new Error(r.error)));
      this.#child.stdin.write(JSON.stringify({ id, op, args }) + "\n");
    });
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((r) => this.#child.on("close", () => r()));
    this.#child.stdin.end();
    await closed;
  }
}

interface SdkExecResult {
  stdout: string;
  stderr: string;
  code: number;
}

let env: ModalTestEnv;
let sdkFake: ModalFake;
let ourFake: ModalFake;
let driver: SdkDriver;

before(async () => {
  env = await setupModalEnv();
  sdkFake = env.fake;
  ourFake = await startModalFake();
  driver = new SdkDriver();
  await driver.call("client", {
    serverUrl: sdkFake.url,
    tokenId: sdkFake.env.MODAL_TOKEN_ID,
    tokenSecret: sdkFake.env.MODAL_TOKEN_SECRET,
  });
});

after(async () => {
  await driver.close();
  closeModalConnections();
  await ourFake.close();
  await env.dispose();
});

describe("official Modal SDK (modal@0.7.2) against the Modal fake, step by step with ours", () => {
  const NAME = "fidelity-sandbox";
  const steps: Record<string, { sdk: RecordedCall[]; ours: RecordedCall[] }> = {};
  let sdkSandboxId = "";
  let ourRuntime: ModalRuntime;

  it("the SDK runs a whole sandbox lifecycle on the fake", async () => {
    assert.equal(
      await driver.call("client", {
        serverUrl: sdkFake.url,
        tokenId: sdkFake.env.MODAL_TOKEN_ID,
        tokenSecret: sdkFake.env.MODAL_TOKEN_SECRET,
      }),
      "0.7.2",
    );
    const sandbox = "main";
    const exec = (args: Record<string, unknown>) =>
      driver.call<SdkExecResult>("exec", { sandbox, ...args });
    const mark = sdkFake.calls.length;
    await driver.call("app");
    sdkSandboxId = await driver.call<string>("create", {
      name: sandbox,
      image: "python:3.11-slim",
      layers: [["ENTRYPOINT []"]],
      params: {
        command: ["sleep", "infinity"],
        timeoutMs: 120_000,
        workdir: "/app",
        cpu: 1,
        memoryMiB: 2048,
        encryptedPorts: [8000],
        name: NAME,
      },
    });
    assert.match(sdkSandboxId, /^sb-/);
    const created = sdkFake.calls.slice(mark);

    const [first, firstCalls] = await recorded(
      sdkFake,
      () => exec({ argv: ["bash", "-c", "echo out; echo err >&2"] }),
    );
    assert.deepEqual(first, { stdout: "out\n", stderr: "err\n", code: 0 });
    const cut = firstCalls.findIndex((c) => c.method === "TaskExecStart");
    steps.provision = { sdk: [...created, ...firstCalls.slice(0, cut)], ours: [] };
    steps.exec = { sdk: firstCalls.slice(cut), ours: [] };

    const [cat, catCalls] = await recorded(
      sdkFake,
      () => exec({ argv: ["cat"], stdin: "hello stdin" }),
    );
    assert.deepEqual(cat, { stdout: "hello stdin", stderr: "", code: 0 });
    steps.stdin = { sdk: catCalls, ours: [] };

    const [seven, sevenCalls] = await recorded(
      sdkFake,
      () => exec({ argv: ["bash", "-c", "exit 7"] }),
    );
    assert.equal(seven.code, 7);
    steps.exit = { sdk: sevenCalls, ours: [] };

    const [withEnv, envCalls] = await recorded(
      sdkFake,
      () => exec({ argv: ["bash", "-c", 'printf %s "$VF_FOO"'], env: { VF_FOO: "b a r" } }),
    );
    assert.equal(withEnv.stdout, "b a r");
    steps.env = { sdk: envCalls, ours: [] };

    const [timed, timedCalls] = await recorded(
      sdkFake,
      () => exec({ argv: ["sleep", "5"], timeoutMs: 1000, read: false }),
    );
    assert.equal(timed.code, 137, "the SDK's exec timeout is a server-side SIGKILL");
    steps.timeout = { sdk: timedCalls, ours: [] };

    const [tunnels, tunnelCalls] = await recorded(
      sdkFake,
      () => driver.call<Record<string, string>>("tunnels", { sandbox }),
    );
    assert.equal(tunnels["8000"], `https://${sdkSandboxId}.fake.modal.host`);
    steps.tunnels = { sdk: tunnelCalls, ours: [] };

    const [, terminateCalls] = await recorded(sdkFake, () => driver.call("terminate", { sandbox }));
    steps.terminate = { sdk: terminateCalls, ours: [] };
    assert.equal(sdkFake.liveSandboxes(), 0);

    const [code, waitCalls] = await recorded(
      sdkFake,
      () => driver.call<number>("wait", { sandboxId: sdkSandboxId }),
    );
    assert.equal(code, 137, "TERMINATED reads as 137");
    steps.wait = { sdk: waitCalls, ours: [] };

    const warnings = await driver.call<string[]>("warnings");
    assert.ok(
      warnings.some((w) => /insecure/i.test(w)),
      "the SDK took its localhost path for the https router URL (plaintext HTTP/2)",
    );
  });

  it("our runtime runs the same lifecycle on a second fake", async () => {
    const profile = { ...resolveModalProfile(), serverUrl: ourFake.url };
    ourRuntime = new ModalRuntime(ModalRuntimeConfig.parse({ timeout: 120 }), {
      name: NAME,
      profile,
    });
    const [, start] = await recorded(ourFake, () => ourRuntime.start());
    const cut = start.findIndex((c) => c.method === "TaskExecStart");
    steps.provision!.ours = start.slice(0, cut);

    const rt = ourRuntime;
    const [first, firstCalls] = await recorded(
      ourFake,
      () => rt.run(["bash", "-c", "echo out; echo err >&2"]),
    );
    assert.deepEqual(first, { exitCode: 0, stdout: "out\n", stderr: "err\n" });
    steps.exec!.ours = firstCalls;

    const [cat, catCalls] = await recorded(
      ourFake,
      () => rt.run(["cat"], { stdin: "hello stdin" }),
    );
    assert.equal(cat.stdout, "hello stdin");
    steps.stdin!.ours = catCalls;

    const [seven, sevenCalls] = await recorded(ourFake, () => rt.run(["bash", "-c", "exit 7"]));
    assert.equal(seven.exitCode, 7);
    steps.exit!.ours = sevenCalls;

    const [withEnv, envCalls] = await recorded(
      ourFake,
      () => rt.run(["bash", "-c", 'printf %s "$VF_FOO"'], { env: { VF_FOO: "b a r" } }),
    );
    assert.equal(withEnv.stdout, "b a r");
    steps.env!.ours = envCalls;

    const [timed, timedCalls] = await recorded(
      ourFake,
      () => rt.run(["sleep", "5"], { timeoutMs: 1000 }),
    );
    assert.equal(timed.exitCode, 124, "our timeout kills the process group and reads as 124");
    steps.timeout!.ours = timedCalls;

    const [url, tunnelCalls] = await recorded(ourFake, () => rt.expose(8000));
    assert.equal(url, `https://${rt.info.id}.fake.modal.host`);
    steps.tunnels!.ours = tunnelCalls;

    const [, terminateCalls] = await recorded(ourFake, () => rt.stopConfirmed());
    steps.terminate!.ours = terminateCalls;
    assert.equal(ourFake.liveSandboxes(), 0);

    const api = sharedModalApi(profile);
    const [result, waitCalls] = await recorded(ourFake, async () => {
      await api.sandboxWait(rt.info.id!, 0);
      return await api.sandboxWait(rt.info.id!, 10);
    });
    assert.equal(result?.status, M.GenericStatus.TERMINATED);
    steps.wait!.ours = waitCalls;
  });

  it("provisioning: app, two image layers, sandbox create with the timeout, task, router", () => {
    const { sdk, ours } = steps.provision!;
    assert.deepEqual(sdk.map((c) => c.method), [
      "AuthTokenGet",
      "AppGetOrCreate",
      "ImageGetOrCreate",
      "ImageJoinStreaming",
      "ImageGetOrCreate",
      "ImageJoinStreaming",
      "SandboxCreate",
      "SandboxGetTaskId",
      "TaskGetCommandRouterAccess",
    ]);
    assertSameCalls("provision", ours, sdk);
    const def = sdk.find((c) => c.method === "SandboxCreate")!.request
      .definition as M.SandboxDefinition;
    assert.equal(def.timeoutSecs, 120);
  });

  for (const step of ["exec", "stdin", "exit", "env", "terminate", "tunnels", "wait"]) {
    it(`${step}: our client sends exactly what the SDK sends`, () => {
      const { sdk, ours } = steps[step]!;
      assert.ok(sdk.length > 0, "the SDK step made calls");
      assertSameCalls(step, canonical(ours), canonical(sdk));
    });
  }

  it("timeout: a documented divergence (we kill the process group ourselves, exit 124)", () => {
    const { sdk, ours } = steps.timeout!;
    const sdkStart = sdk.find((c) => c.method === "TaskExecStart")!.request;
    assert.equal(sdkStart.timeoutSecs, 1, "the SDK asks the server to kill after 1 s");
    assert.deepEqual(sdkStart.commandArgs, ["sleep", "5"]);
    const starts = ours.filter((c) => c.method === "TaskExecStart").map((c) => c.request);
    assert.equal(starts.length, 2, "the command, then the kill");
    assert.equal(starts[0]!.timeoutSecs, undefined, "no server-side timeout");
    assert.deepEqual((starts[0]!.commandArgs as string[]).slice(0, 2), ["sh", "-c"]);
    assert.deepEqual((starts[0]!.commandArgs as string[]).slice(-2), ["sleep", "5"]);
    assert.equal((starts[1]!.commandArgs as string[])[3], "vf-kill");
    for (const c of ours) assert.equal(c.status, 0, `${c.method} succeeded`);
  });

  it("the transport headers that legitimately differ are the ones documented", () => {
    const sdkCall = steps.provision!.sdk.find((c) => c.method === "SandboxCreate")!;
    const ourCall = steps.provision!.ours.find((c) => c.method === "SandboxCreate")!;
    assert.equal(sdkCall.metadata["grpc-accept-encoding"], "identity,deflate,gzip");
    assert.equal(ourCall.metadata["grpc-accept-encoding"], "identity", "we never decompress");
    assert.match(sdkCall.metadata["user-agent"] ?? "", /^grpc-node-js\//);
    assert.match(ourCall.metadata["user-agent"] ?? "", /^verifiers-ts\//);
  });
});

describe("a sandbox's lifetime ends what runs in it (the SDK and ours)", () => {
  it("the SDK: a command outliving a 2 s sandbox dies with it; exec fails, the sandbox reads TIMEOUT (124)", async () => {
    await driver.call("app");
    const sandboxId = await driver.call<string>("create", {
      name: "short-lived",
      image: "alpine:3.20",
      params: { command: ["sleep", "infinity"], timeoutMs: 2000, workdir: "/app" },
    });
    await assert.rejects(
      driver.call<SdkExecResult>("exec", {
        sandbox: "short-lived",
        argv: ["sh", "-c", "sleep 8; echo finished"],
      }),
      /NOT_FOUND: Task ta-[0-9a-f]+ has finished/,
      "the command never finishes: the task is gone",
    );
    assert.equal(sdkFake.sandbox(sandboxId)?.result?.status, M.GenericStatus.TIMEOUT);
    assert.deepEqual(
      sdkFake.execExits(sandboxId),
      [{ signal: 9 }],
      "killed when the lifetime ended, not run to its end",
    );
    assert.equal(await driver.call<number>("wait", { sandboxId }), 124, "TIMEOUT reads as 124");
  });

  it("ours: a command running when the lifetime passes fails as a sandbox error naming the end", async () => {
    const profile = { ...resolveModalProfile(), serverUrl: ourFake.url };
    const rt = new ModalRuntime(ModalRuntimeConfig.parse({ timeout: 60 }), {
      name: "short-lived-ours",
      profile,
    });
    await rt.start();
    const starts = ourFake.callsOf("TaskExecStart").length;
    const running = rt.run(["sh", "-c", "sleep 30; echo finished"]);
    await ourFake.waitForCalls("TaskExecStart", starts + 1);
    ourFake.clock.advance(61_000); // past the 60 s lifetime, on the fake's clock
    await assert.rejects(
      running,
      (e: unknown) =>
        e instanceof SandboxError && /has finished/.test(e.message) &&
        /lifetime timeout/.test(e.hint ?? ""),
    );
    assert.equal(ourFake.sandbox(rt.info.id!)?.result?.status, M.GenericStatus.TIMEOUT);
    const id = rt.info.id!;
    for (let i = 0; i < 400 && ourFake.execExits(id).at(-1) === null; i++) {
      await new Promise((r) => setTimeout(r, 25)); // the SIGKILL is reaped asynchronously
    }
    assert.deepEqual(ourFake.execExits(id).at(-1), { signal: 9 }, "killed at the end");
    assert.equal(await rt.alive(), false);
    await rt.stopConfirmed();
  });
});

describe("the SDK fails when the fake answers wrongly", () => {
  let n = 0;
  const sdkSandbox = async (): Promise<string> => {
    const name = `neg-${++n}`;
    await driver.call("create", { name, image: "alpine:3.20", params: { name } });
    return name;
  };

  it("a router URL with http:// (as the reference suggested) is refused by the SDK", async () => {
    const sandbox = await sdkSandbox();
    sdkFake.knobs.routerUrlScheme = "http";
    try {
      await assert.rejects(
        driver.call("exec", { sandbox, argv: ["true"] }),
        /Task router URL must be https/,
      );
    } finally {
      sdkFake.knobs.routerUrlScheme = "https";
      await driver.call("terminate", { sandbox });
    }
  });

  it("a SandboxCreate answer without sandbox_id makes the SDK's next call fail", async () => {
    sdkFake.knobs.omitSandboxId = true;
    let sandbox: string;
    try {
      sandbox = await sdkSandbox();
    } finally {
      sdkFake.knobs.omitSandboxId = false;
    }
    await assert.rejects(
      driver.call("exec", { sandbox, argv: ["true"] }),
      /sandbox_id is required/,
    );
  });

  it("without a task id the SDK never starts the command; it fails once the sandbox is gone", async () => {
    const sandbox = await sdkSandbox();
    const polls = sdkFake.callsOf("SandboxGetTaskId").length;
    const routers = sdkFake.callsOf("TaskGetCommandRouterAccess").length;
    const starts = sdkFake.callsOf("TaskExecStart").length;
    sdkFake.knobs.omitTaskId = true;
    try {
      let settled = false;
      const running = driver.call("exec", { sandbox, argv: ["true"] });
      running.then(() => settled = true, () => settled = true);
      await sdkFake.waitForCalls("SandboxGetTaskId", polls + 3);
      assert.equal(settled, false, "still waiting for a task id");
      assert.equal(sdkFake.callsOf("TaskGetCommandRouterAccess").length, routers);
      assert.equal(sdkFake.callsOf("TaskExecStart").length, starts);
      sdkFake.inject({ method: "SandboxGetTaskId", code: Code.NOT_FOUND, message: "gone" });
      await assert.rejects(running, /NOT_FOUND|gone/);
      assert.equal(sdkFake.callsOf("TaskExecStart").length, starts, "the command never ran");
    } finally {
      sdkFake.knobs.omitTaskId = false;
      await driver.call("terminate", { sandbox });
    }
  });

  it("the same switch makes our runtime fail too", async () => {
    sdkFake.knobs.routerUrlScheme = "http";
    const rt = new ModalRuntime(ModalRuntimeConfig.parse({}), {
      name: "neg-ours-http-router",
      profile: resolveModalProfile(),
    });
    try {
      await assert.rejects(rt.start(), /Task router URL must be https/);
    } finally {
      sdkFake.knobs.routerUrlScheme = "https";
      await rt.stopConfirmed();
    }
    assert.equal(sdkFake.sandbox(rt.info.id!)?.result?.status, M.GenericStatus.TERMINATED);
  });
});
