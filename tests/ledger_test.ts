import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { execPath } from "../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { SandboxError } from "../kit/errors.ts";
import { userCacheDir } from "../kit/runtime/cache_dir.ts";
import {
  acquireCreateSlot,
  createIntervalMs,
  MAX_CREATE_WAIT_MS,
  reserveCreateSlot,
} from "../kit/runtime/create_limiter.ts";
import { ledgerDir, listSandboxes, recordSandbox, removeSandbox } from "../kit/runtime/ledger.ts";
import {
  coresToMilliCpu,
  gbToMib,
  idleSecondsToMinutes,
  secondsToMinutesCeil,
  truncSeconds,
} from "../kit/runtime/remote_config.ts";
import { at } from "./_assert.ts";

const LIB = join(import.meta.dirname!, "..", "kit", "runtime");

let root = "";
const saved: Record<string, string | undefined> = {};

function freshCache(): string {
  const dir = mkdtempSync(join(root, "cache-"));
  process.env.VF_CACHE_DIR = dir;
  return dir;
}

/** Runs a TypeScript snippet in a child process of the runtime running the tests. */
function runChild(code: string, env: Record<string, string>): Promise<string> {
  const file = join(mkdtempSync(join(root, "child-")), "child.ts");
  writeFileSync(file, code);
  const argv = runtimeName() === "deno" ? [execPath(), "run", "-A", file] : [execPath(), file];
  return new Promise((resolve, reject) => {
    const child = spawn(at(argv, 0), argv.slice(1), {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => out += d);
    child.stderr.setEncoding("utf8").on("data", (d: string) => err += d);
    child.on("error", reject);
    child.on(
      "close",
      (code) => code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`)),
    );
  });
}

before(() => {
  root = mkdtempSync(join(tmpdir(), "vf-ledger-test-"));
  for (const k of ["VF_CACHE_DIR", "XDG_CACHE_HOME"]) saved[k] = process.env[k];
});

after(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(root, { recursive: true, force: true });
});

describe("user cache dir", () => {
  it("is $VF_CACHE_DIR, else $XDG_CACHE_HOME/verifiers-ts, created on demand", () => {
    const explicit = join(root, "explicit", "deep");
    process.env.VF_CACHE_DIR = explicit;
    assert.equal(userCacheDir(), explicit);
    assert.deepEqual(readdirSync(explicit), []);
    delete process.env.VF_CACHE_DIR;
    process.env.XDG_CACHE_HOME = join(root, "xdg");
    assert.equal(userCacheDir(), join(root, "xdg", "verifiers-ts"));
    delete process.env.XDG_CACHE_HOME;
    assert.match(userCacheDir(), /[/\\]\.cache[/\\]verifiers-ts$/);
    freshCache();
  });
});

describe("sandbox ledger", () => {
  it("records one file per sandbox, lists them oldest first, and removes them", () => {
    const dir = freshCache();
    recordSandbox({
      provider: "prime",
      id: "b",
      created_at: "2026-01-02T00:00:00.000Z",
      run: "runs/x",
      name: "vf-b",
      config: { base_url: "http://127.0.0.1:9" },
    });
    recordSandbox({ provider: "modal", id: "sb-a", created_at: "2026-01-01T00:00:00.000Z" });
    assert.deepEqual(readdirSync(join(dir, "sandboxes")).sort(), [
      "modal-sb-a.json",
      "prime-b.json",
    ]);
    assert.deepEqual(listSandboxes(), [
      {
        provider: "modal",
        id: "sb-a",
        created_at: "2026-01-01T00:00:00.000Z",
        run: null,
        name: null,
        config: {},
      },
      {
        provider: "prime",
        id: "b",
        created_at: "2026-01-02T00:00:00.000Z",
        run: "runs/x",
        name: "vf-b",
        config: { base_url: "http://127.0.0.1:9" },
      },
    ]);
    recordSandbox({ provider: "prime", id: "b", created_at: "2026-01-03T00:00:00.000Z" });
    assert.equal(listSandboxes().length, 2, "the same sandbox is recorded once");
    removeSandbox("prime", "b");
    removeSandbox("prime", "b");
    removeSandbox("prime", "never-there");
    assert.deepEqual(listSandboxes().map((e) => e.id), ["sb-a"]);
  });

  it("keeps odd ids inside the ledger directory and skips files it cannot read", () => {
    const dir = freshCache();
    recordSandbox({ provider: "prime", id: "../../etc/x y", created_at: "t" });
    writeFileSync(join(ledgerDir(), "garbage.json"), "{ not json");
    writeFileSync(join(ledgerDir(), "prime-half.json.123.tmp"), "{}");
    assert.deepEqual(readdirSync(join(dir, "sandboxes")).filter((f) => f.startsWith("prime-")), [
      "prime-.._.._etc_x_y.json",
      "prime-half.json.123.tmp",
    ]);
    assert.deepEqual(listSandboxes().map((e) => e.id), ["../../etc/x y"]);
    removeSandbox("prime", "../../etc/x y");
    assert.deepEqual(listSandboxes(), []);
  });

  it("takes concurrent writers in several processes without losing entries", async () => {
    const dir = freshCache();
    const code = (n: number) =>
      `import { recordSandbox } from ${JSON.stringify(join(LIB, "ledger.ts"))};
for (let i = 0; i < 20; i++) {
  recordSandbox({ provider: "prime", id: "p${n}-" + i, created_at: new Date().toISOString() });
}`;
    await Promise.all([0, 1, 2].map((n) => runChild(code(n), { VF_CACHE_DIR: dir })));
    const ids = listSandboxes().map((e) => e.id);
    assert.equal(ids.length, 60);
    assert.equal(new Set(ids).size, 60);
    assert.ok(!readdirSync(join(dir, "sandboxes")).some((f) => f.endsWith(".tmp")));
  });
});

describe("creation limiter", () => {
  it("turns rates into intervals; the tighter limit wins; none or <= 0 is unlimited", () => {
    assert.equal(createIntervalMs({ perSecond: 40 }), 25);
    assert.equal(createIntervalMs({ perMinute: 30 }), 2000);
    assert.equal(createIntervalMs({ perSecond: 40, perMinute: 30 }), 2000);
    assert.equal(createIntervalMs({}), null);
    assert.equal(createIntervalMs({ perSecond: 0, perMinute: null }), null);
  });

  it("hands out slots one interval apart", async () => {
    freshCache();
    const t0 = Date.now();
    const a = await reserveCreateSlot("test-seq", 60_000);
    const b = await reserveCreateSlot("test-seq", 60_000);
    const c = await reserveCreateSlot("test-seq", 60_000);
    assert.ok(a >= t0);
    assert.equal(b - a, 60_000);
    assert.equal(c - b, 60_000);
    const other = await reserveCreateSlot("test-other", 60_000);
    assert.ok(other < b, "each provider has its own bucket");
  });

  it("refuses a backlog longer than 300 s", async () => {
    freshCache();
    await reserveCreateSlot("test-backlog", MAX_CREATE_WAIT_MS + 1000);
    await assert.rejects(reserveCreateSlot("test-backlog", 1000), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.match(e.message, /rate limited/);
      return true;
    });
  });

  it("is shared by all processes of the user: no two slots collide", async () => {
    const dir = freshCache();
    const code = `import { reserveCreateSlot } from ${
      JSON.stringify(join(LIB, "create_limiter.ts"))
    };
const slots = [];
for (let i = 0; i < 10; i++) slots.push(await reserveCreateSlot("test-shared", 1000));
console.log(JSON.stringify(slots));`;
    const outs = await Promise.all(
      [0, 1, 2].map(() => runChild(code, { VF_CACHE_DIR: dir })),
    );
    const slots = outs.flatMap((o) => JSON.parse(o) as number[]).sort((x, y) => x - y);
    assert.equal(slots.length, 30);
    for (let i = 1; i < slots.length; i++) {
      assert.ok(at(slots, i) - at(slots, i - 1) >= 1000, `slots ${i - 1} and ${i} collide`);
    }
  });

  it("recovers a lock left behind by a dead process, but waits for a live one", async () => {
    const dir = freshCache();
    const lock = join(dir, "limiter", "test-stale.lock");
    mkdirSync(join(dir, "limiter"), { recursive: true });
    writeFileSync(lock, "someone\n");
    const old = (Date.now() - 60_000) / 1000;
    utimesSync(lock, old, old);
    await reserveCreateSlot("test-stale", 10);
    assert.throws(() => readFileSync(lock), /ENOENT/, "the lock was released");

    writeFileSync(lock, "alive\n");
    let done = false;
    const waiting = reserveCreateSlot("test-stale", 10).then(() => done = true);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(done, false, "a fresh lock is respected");
    rmSync(lock);
    await waiting;
    assert.equal(done, true);
  });

  it("acquireCreateSlot waits for its slot, is a no-op without a limit, and aborts", async () => {
    const dir = freshCache();
    await acquireCreateSlot("test-none", {});
    assert.deepEqual(readdirSync(dir), [], "no state without a limit");
    await acquireCreateSlot("test-wait", { perSecond: 5 });
    const before = Date.now();
    await acquireCreateSlot("test-wait", { perSecond: 5 });
    assert.ok(Date.now() - before >= 150, "the second slot is ~200 ms later");
    const ac = new AbortController();
    await reserveCreateSlot("test-abort", 60_000);
    const pending = acquireCreateSlot("test-abort", { perMinute: 1 }, ac.signal);
    ac.abort(new Error("stop waiting"));
    await assert.rejects(pending, /stop waiting/);
  });
});

describe("remote unit conversions", () => {
  it("rounds and truncates as the providers expect", () => {
    assert.equal(secondsToMinutesCeil(121), 3);
    assert.equal(secondsToMinutesCeil(120), 2);
    assert.equal(idleSecondsToMinutes(61), 2);
    assert.equal(idleSecondsToMinutes(1), 1);
    assert.equal(truncSeconds(121.9), 121);
    assert.equal(truncSeconds(120.5), 120);
    assert.equal(gbToMib(2), 2048);
    assert.equal(coresToMilliCpu(1), 1000);
    assert.equal(coresToMilliCpu(0.25), 250);
  });
});
