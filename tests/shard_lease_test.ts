import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { VerifiersError } from "../kit/errors.ts";
import { acquireLease, LEASE_HELD_EXIT, leaseOf, type LeaseRecord } from "../lib/run/lease.ts";

function dir(): string {
  return mkdtempSync(join(tmpdir(), "vf-lease-"));
}

/** The pid of a process that has exited (reaped). */
function deadPid(): number {
  const r = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(r.stdout.trim());
}

function plant(d: string, record: Partial<LeaseRecord>): void {
  const now = new Date().toISOString();
  writeFileSync(
    join(d, "lease.json"),
    JSON.stringify({
      owner: `${record.host}:${record.pid}`,
      token: "planted",
      started: now,
      heartbeat: now,
      ...record,
    }),
  );
}

function refused(fn: () => unknown): VerifiersError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof VerifiersError, String(e));
    return e;
  }
  assert.fail("not refused");
}

describe("the lease of a shard", () => {
  it("refuses a second holder while the first lives, and frees the lease on release", () => {
    const d = dir();
    const first = acquireLease(d);
    const e = refused(() => acquireLease(d));
    assert.equal(e.code, "shard_leased");
    assert.equal(e.exitCode, LEASE_HELD_EXIT);
    assert.match(e.message, new RegExp(`${hostname()}:\\d+`));
    assert.equal(leaseOf(d)?.live, true);
    first.release();
    assert.equal(existsSync(join(d, "lease.json")), false);
    acquireLease(d).release();
  });

  it("takes over a lease whose owner on this host is gone (kill -9)", () => {
    const d = dir();
    plant(d, { host: hostname(), pid: deadPid() });
    const lease = acquireLease(d);
    const saved = JSON.parse(readFileSync(join(d, "lease.json"), "utf8"));
    assert.equal(saved.token, lease.record.token);
    // the takeover marker makes a second taker of the same stale lease lose
    assert.ok(readdirSync(d).includes("lease.json.takeover-planted"));
    lease.release();
    assert.deepEqual(readdirSync(d), []);
  });

  it("refuses a live lease of another host and takes over one whose heartbeat is stale", () => {
    const d = dir();
    plant(d, { host: "elsewhere", pid: 1 });
    assert.equal(refused(() => acquireLease(d)).code, "shard_leased");
    plant(d, {
      host: "elsewhere",
      pid: 1,
      heartbeat: new Date(Date.now() - 120_000).toISOString(),
    });
    assert.equal(leaseOf(d)?.live, false);
    acquireLease(d).release();
  });

  it("renews its heartbeat and tells its owner when the lease was taken", async () => {
    const d = dir();
    let lostTo: string | null = null;
    const lease = acquireLease(d, { heartbeatMs: 20, onLost: (by) => lostTo = by });
    const beat0 = lease.record.heartbeat;
    await new Promise((r) => setTimeout(r, 80));
    const beat1 = JSON.parse(readFileSync(join(d, "lease.json"), "utf8")).heartbeat;
    assert.ok(beat1 > beat0, `${beat1} after ${beat0}`);
    plant(d, { host: "elsewhere", pid: 9 });
    await new Promise((r) => setTimeout(r, 80));
    assert.equal(lostTo, "elsewhere:9");
    lease.release();
    assert.ok(existsSync(join(d, "lease.json")), "a lease taken over is not removed by the loser");
  });
});
