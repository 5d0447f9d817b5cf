/**
 * The external runtime fixture (tests/fixtures/crate_runtime/, built only on the plugin kit's
 * remote-sandbox base) against its strict loopback fake (tests/fixtures/crate_fake.ts): the
 * shared runtime conformance suite, the ledger, stop-by-id, the harness timeout cap, and the
 * fake's refusals.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { SandboxError } from "../kit/errors.ts";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { capHarnessTimeout, type Runtime } from "../kit/runtime/runtime.ts";
import { runtimeConformance } from "./conformance/runtime_conformance.ts";
import { type CrateFake, startCrateFake } from "./fixtures/crate_fake.ts";
import crate from "./fixtures/crate_runtime/mod.ts";
import { useOwnCacheDir } from "./_cache_dir.ts";

const FIXTURE = join(dirname(fileURLToPath(import.meta.url)), "fixtures", "crate_runtime");
let fake: CrateFake;
useOwnCacheDir("vf-crate-cache-");
let seq = 0;
const made: Runtime[] = [];
const logs: string[] = [];

function makeCrate(config: Record<string, unknown> = {}): Runtime {
  const rt = crate.create(
    { url: fake.url, workdir: "/work", ...config },
    { name: `crate-${++seq}`, run: "runs/crate", log: (m) => logs.push(m) },
  );
  made.push(rt);
  return rt;
}

/** A raw request to the fake. */
async function raw(method: string, path: string, body?: string, headers = {}): Promise<number> {
  const res = await fetch(`${fake.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${fake.token}`,
      "content-type": "application/json",
      ...headers,
    },
    body: body ?? null,
  });
  await res.body?.cancel();
  return res.status;
}

before(async () => {
  fake = await startCrateFake();
  process.env.CRATE_TOKEN = fake.token;
});

after(async () => {
  for (const rt of made) await rt.stop();
  await fake.close();
  delete process.env.CRATE_TOKEN;
});

runtimeConformance("crate runtime (external plugin on the kit)", () => makeCrate());

describe("crate runtime fixture", () => {
  it("imports only the kit, bare packages and its own folder, in under 300 lines", () => {
    let lines = 0;
    for (const file of readdirSync(FIXTURE)) {
      const text = readFileSync(join(FIXTURE, file), "utf8");
      lines += text.split("\n").length - 1;
      for (const [, spec] of text.matchAll(/from\s+"([^"]+)"/g)) {
        if (!spec!.startsWith(".")) continue;
        const target = normalize(join(FIXTURE, spec!));
        const kit = normalize(join(FIXTURE, "../../../kit/mod.ts"));
        assert.ok(target === kit || target.startsWith(FIXTURE), `${file} imports ${spec}`);
      }
    }
    assert.ok(lines > 0 && lines < 300, `${lines} lines`);
  });

  it("keeps a live sandbox in the ledger until its termination is confirmed", async () => {
    const rt = makeCrate();
    await rt.start();
    const id = rt.info.id!;
    const entry = listSandboxes().find((e) => e.id === id);
    assert.equal(entry?.provider, "crate");
    assert.equal(entry?.run, "runs/crate");
    assert.deepEqual(entry?.config, { url: fake.url });
    assert.ok(!JSON.stringify(listSandboxes()).includes(fake.token), "no token in the ledger");
    await rt.stopConfirmed();
    assert.equal(fake.sandboxes.get(id)?.state, "terminated");
    assert.ok(!listSandboxes().some((e) => e.id === id));
  });

  it("stopById terminates a ledger entry and counts an unknown sandbox as gone", async () => {
    const rt = makeCrate();
    await rt.start();
    const entry = listSandboxes().find((e) => e.id === rt.info.id)!;
    await crate.stopById!(entry, { log: (m) => logs.push(m) });
    assert.equal(fake.sandboxes.get(entry.id)?.state, "terminated");
    await crate.stopById!(entry, { log: (m) => logs.push(m) });
    assert.ok(logs.some((l) => l.includes(entry.id) && l.includes("already gone")));
    // the runtime still holds its handle: the 404 of its own DELETE confirms too
    await rt.stopConfirmed();
    assert.equal(rt.stopped, true);
  });

  it("a start that fails after the id keeps the sandbox for stopConfirmed() to free", async () => {
    const rt = makeCrate({ workdir: "/proc/no-such-dir/work" });
    await assert.rejects(rt.start(), (e: unknown) => {
      assert.ok(e instanceof SandboxError);
      assert.match(e.message, /^crate sandbox provisioning failed: cannot create the workdir/);
      return true;
    });
    const id = rt.info.id!;
    assert.equal(fake.sandboxes.get(id)?.state, "running");
    assert.ok(listSandboxes().some((e) => e.id === id), "in the ledger while it lives");
    await assert.rejects(rt.start(), /not confirmed terminated/);
    await rt.stopConfirmed();
    assert.equal(fake.sandboxes.get(id)?.state, "terminated");
    assert.ok(!listSandboxes().some((e) => e.id === id));
  });

  it("stop() ends a command in flight and leaves the runtime stopped", async () => {
    const rt = makeCrate();
    await rt.start();
    const running = rt.run(["sleep", "30"]);
    await new Promise((r) => setTimeout(r, 200));
    await rt.stop();
    const r = await running;
    assert.notEqual(r.exitCode, 0);
    assert.equal(rt.stopped, true);
    assert.equal(fake.sandboxes.get(rt.info.id!)?.state, "terminated");
  });

  it("caps a harness timeout to the sandbox lifetime", () => {
    const rt = makeCrate({ timeout: 120.9 });
    assert.deepEqual(capHarnessTimeout(999, rt), { timeoutS: 120, capped: true });
    assert.deepEqual(capHarnessTimeout(60, rt), { timeoutS: 60, capped: false });
  });

  it("a refused create fails the start with its status and leaves no ledger entry", async () => {
    process.env.CRATE_TOKEN = "wrong";
    try {
      const before = listSandboxes().length;
      const rt = makeCrate();
      await assert.rejects(rt.start(), (e: unknown) => {
        assert.ok(e instanceof SandboxError);
        assert.match(e.message, /^crate sandbox provisioning failed: .*401/);
        assert.equal(e.statusCode, 401);
        return true;
      });
      assert.equal(listSandboxes().length, before, "the pending entry went with the refusal");
      await rt.stopConfirmed();
      assert.equal(rt.info.id, null);
    } finally {
      process.env.CRATE_TOKEN = fake.token;
    }
  });

  it("the fake rejects what the service rejects", async () => {
    const ok = JSON.stringify({ name: "strict-probe", image: "x", lifetime_s: 60 });
    assert.equal(await raw("POST", "/v1/sandboxes", ok, { authorization: "Bearer nope" }), 401);
    assert.equal(await raw("POST", "/v1/sandboxes", ok, { "content-type": "text/plain" }), 415);
    const bad = [
      { name: "Bad Name", image: "x", lifetime_s: 60 },
      { name: "n", image: "x", lifetime_s: 59 },
      { name: "n", image: "x", lifetime_s: 60, extra: 1 },
      { name: "n", image: "x" },
    ];
    for (const b of bad) assert.equal(await raw("POST", "/v1/sandboxes", JSON.stringify(b)), 400);
    assert.equal(await raw("POST", "/v1/sandboxes", ok), 201);
    assert.equal(await raw("POST", "/v1/sandboxes", ok), 409, "a live sandbox has that name");
    const id = [...fake.sandboxes.values()].find((s) => s.name === "strict-probe")!.id;
    const exec = (b: unknown) => raw("POST", `/v1/sandboxes/${id}/exec`, JSON.stringify(b));
    assert.equal(await exec({ argv: ["true"] }), 409, "not running before a status read");
    assert.equal(await raw("GET", `/v1/sandboxes/${id}`), 200);
    assert.equal(await exec({ argv: ["true"] }), 200);
    assert.equal(await exec({ argv: [] }), 400);
    assert.equal(await exec({ argv: ["true"], cwd: "rel" }), 400);
    assert.equal(await exec({ argv: ["true"], env: { "A-B": "x" } }), 400);
    assert.equal(await raw("DELETE", `/v1/sandboxes/${id}`), 204);
    assert.equal(await raw("DELETE", `/v1/sandboxes/${id}`), 404);
    assert.equal(await exec({ argv: ["true"] }), 404);
    assert.equal(await raw("GET", "/v1/sandboxes/nope"), 404);
  });
});
