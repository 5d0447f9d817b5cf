import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { runCli } from "./_cli.ts";
import { type PrimeFake, startPrimeFake } from "./fakes/prime_server.ts";
import { parseSandboxExecArgs } from "../lib/cli/sandboxes_command.ts";
import { listSandboxes, recordSandbox } from "../kit/runtime/ledger.ts";
import { PrimeClient } from "../plugins/runtimes/prime/client.ts";
import { at } from "./_assert.ts";

let fake: PrimeFake;
let cache = "";
let savedCache: string | undefined;
const made: string[] = [];

function env(): Record<string, string> {
  return { ...fake.env(), VF_CACHE_DIR: cache };
}

function freshCache(): void {
  cache = mkdtempSync(join(tmpdir(), "vf-sandboxes-cli-"));
  made.push(cache);
  process.env.VF_CACHE_DIR = cache;
}

async function liveSandbox(): Promise<string> {
  const c = new PrimeClient({ baseUrl: fake.url, apiKey: fake.apiKey, teamId: null });
  try {
    const rec = await c.createSandbox({ name: "gc-me", docker_image: "img", vm: false });
    return rec.id;
  } finally {
    c.close();
  }
}

before(async () => {
  savedCache = process.env.VF_CACHE_DIR;
  fake = await startPrimeFake();
});

after(async () => {
  await fake.close();
  if (savedCache === undefined) delete process.env.VF_CACHE_DIR;
  else process.env.VF_CACHE_DIR = savedCache;
});

describe("vf sandboxes list", () => {
  it("says so when the ledger is empty", async () => {
    freshCache();
    const r = await runCli(["sandboxes", "list"], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /no sandboxes in the ledger/);
  });

  it("shows each entry, as a table or as JSON", async () => {
    freshCache();
    recordSandbox({
      provider: "prime",
      id: "sbx-one",
      created_at: new Date(Date.now() - 3 * 3600_000).toISOString(),
      run: "outputs/run-7",
      name: "trace-abc",
    });
    const r = await runCli(["sandboxes", "list"], { env: env() });
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    assert.match(at(lines, 0), /^PROVIDER\s+ID\s+AGE\s+NAME\s+RUN$/);
    assert.match(at(lines, 1), /^prime\s+sbx-one\s+3h\s+trace-abc\s+outputs\/run-7$/);
    assert.match(r.stderr, /1 sandbox\(es\) not confirmed stopped/);
    const j = await runCli(["sandboxes", "list", "--json"], { env: env() });
    assert.deepEqual(JSON.parse(j.stdout).map((e: { id: string }) => e.id), ["sbx-one"]);
  });

  it("rejects unknown subcommands with exit code 2", async () => {
    const r = await runCli(["sandboxes", "purge"], { env: env() });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown subcommand "purge"\nhint: subcommands: list, gc/);
  });
});

describe("vf sandboxes gc", () => {
  it("confirms every entry (404 = gone) and keeps and names what it could not stop", async () => {
    freshCache();
    const a = await liveSandbox();
    const b = await liveSandbox();
    const base = { created_at: new Date().toISOString(), config: { base_url: fake.url } };
    recordSandbox({ provider: "prime", id: a, ...base });
    recordSandbox({ provider: "prime", id: b, ...base });
    recordSandbox({ provider: "prime", id: "already-gone", ...base });
    recordSandbox({ provider: "nosuchruntime", id: "x1", ...base });
    fake.fault({
      kind: "delete",
      path: new RegExp(b),
      respond: { status: 500, body: { detail: "try later" } },
      times: 10,
    });
    const r = await runCli(["sandboxes", "gc"], { env: env() });
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stdout, new RegExp(`stopped prime ${a}`));
    assert.match(r.stdout, /stopped prime already-gone/);
    assert.match(r.stderr, new RegExp(`not stopped: prime ${b}: HTTP 500: try later`));
    assert.match(r.stderr, /not stopped: nosuchruntime x1: unknown runtime type/);
    assert.match(r.stderr, /2 of 4 sandbox\(es\) confirmed stopped; 2 left in the ledger/);
    assert.equal(fake.sandboxes.get(a)!.deleted, true);
    assert.equal(fake.sandboxes.get(b)!.deleted, false);
    assert.deepEqual(listSandboxes().map((e) => e.id).sort(), [b, "x1"].sort());

    fake.clearFaults();
    const again = await runCli(["sandboxes", "gc"], { env: env() });
    assert.equal(again.code, 1);
    assert.equal(fake.sandboxes.get(b)!.deleted, true);
    assert.deepEqual(listSandboxes().map((e) => e.id), ["x1"]);
    assert.ok(!`${r.stdout}${r.stderr}${again.stderr}`.includes(fake.apiKey));
  });
});

describe("vf sandbox exec", () => {
  it("parses its arguments", () => {
    assert.deepEqual(
      parseSandboxExecArgs([
        "--runtime",
        "prime",
        "--runtime.idle-timeout=120",
        "--runtime.vm",
        "--runtime.image",
        "debian",
        "--",
        "ls",
        "--runtime",
      ]),
      {
        runtime: "prime",
        settings: { idle_timeout: "120", vm: true, image: "debian" },
        command: ["ls", "--runtime"],
        interactive: false,
      },
    );
    for (const flag of ["-i", "--interactive"]) {
      const parsed = parseSandboxExecArgs(["--runtime", "local", flag, "--", "cat", "-i"]);
      assert.deepEqual(parsed, {
        runtime: "local",
        settings: {},
        command: ["cat", "-i"],
        interactive: true,
      });
    }
    assert.throws(() => parseSandboxExecArgs(["--", "ls"]), /--runtime is required/);
    assert.throws(() => parseSandboxExecArgs(["--runtime", "prime"]), /no command after/);
    assert.throws(() => parseSandboxExecArgs(["--bogus", "--", "ls"]), /unexpected argument/);
  });

  it("starts a sandbox, prints the command's output, and confirms the stop", async () => {
    freshCache();
    const creates = fake.count("create");
    const deletes = fake.count("delete");
    const r = await runCli([
      "sandbox",
      "exec",
      "--runtime",
      "prime",
      "--runtime.timeout",
      "300",
      "--runtime.labels",
      '["probe"]',
      "--",
      "sh",
      "-c",
      "echo hello from $(pwd); echo oops >&2; exit 3",
    ], { env: env() });
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, "hello from /app\n");
    assert.match(r.stderr, /oops/);
    assert.match(r.stderr, /stopped \(confirmed\)/);
    assert.equal(fake.count("create"), creates + 1);
    assert.equal(fake.count("delete"), deletes + 1);
    const body = fake.requests.filter((q) => q.kind === "create").at(-1)!.json as {
      timeout_minutes: number;
      labels: string[];
    };
    assert.equal(body.timeout_minutes, 5);
    assert.deepEqual(body.labels, ["probe"]);
    assert.equal(fake.liveSandboxes(), 0);
    assert.deepEqual(listSandboxes(), []);
  });

  it("refuses a bad runtime config or key with exit code 2, before creating anything", async () => {
    const creates = fake.count("create");
    const bad = await runCli(
      ["sandbox", "exec", "--runtime", "prime", "--runtime.timeout", "30", "--", "true"],
      { env: env() },
    );
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /timeout must be between 60 and 86400 seconds/);
    const unknown = await runCli(
      ["sandbox", "exec", "--runtime", "prime", "--runtime.colour", "red", "--", "true"],
      { env: env() },
    );
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /unknown key --runtime\.colour/);
    assert.equal(fake.count("create"), creates);
  });

  it("reports a provisioning failure and leaves nothing behind", async () => {
    freshCache();
    fake.options.failingImages["missing:image"] = "IMAGE_PULL_FAILED";
    try {
      const r = await runCli(
        ["sandbox", "exec", "--runtime", "prime", "--runtime.image", "missing:image", "--", "true"],
        { env: env() },
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr, /provisioning failed: .*IMAGE_PULL_FAILED/);
      assert.match(r.stderr, /stopped \(confirmed\)/);
      assert.deepEqual(listSandboxes(), []);
    } finally {
      delete fake.options.failingImages["missing:image"];
    }
  });
});

after(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
