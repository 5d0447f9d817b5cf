/**
 * `findPendingWith` (kit/remote/find_pending.ts): the `findPending` a runtime plugin makes
 * from its provider's lookup by name. Prime's use of it against its loopback fake is in
 * runtime_prime_test.ts; this file pins the parts every provider shares.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { findPendingWith, type LedgerEntry, SandboxError } from "../kit/mod.ts";

const pending: LedgerEntry = {
  provider: "crate",
  id: "",
  created_at: "",
  state: "pending",
  key: "k1",
  name: "vf-run-7",
  labels: ["a"],
};

describe("findPendingWith", () => {
  it("asks the provider for the entry's name and lists each id once", async () => {
    const asked: [string, LedgerEntry][] = [];
    const find = findPendingWith("crate", (name, entry) => {
      asked.push([name, entry]);
      return Promise.resolve(["sb-2", "sb-1", "sb-2"]);
    });
    assert.deepEqual(await find(pending), ["sb-2", "sb-1"]);
    assert.deepEqual(asked, [["vf-run-7", pending]]);
  });

  it("finds nothing, without asking, for an entry with no name", async () => {
    let asked = 0;
    const find = findPendingWith("crate", () => {
      asked++;
      return Promise.resolve(["sb-1"]);
    });
    assert.deepEqual(await find({ ...pending, name: null }), []);
    assert.deepEqual(await find({ ...pending, name: "" }), []);
    assert.equal(asked, 0);
  });

  it("turns a failed lookup into a SandboxError naming the provider and the sandbox", async () => {
    const cause = new Error("HTTP 502: bad gateway");
    const find = findPendingWith("crate", () => Promise.reject(cause));
    await assert.rejects(find(pending), (e: unknown) => {
      assert.ok(e instanceof SandboxError, String(e));
      assert.equal(e.message, 'crate lookup of sandbox "vf-run-7" failed: HTTP 502: bad gateway');
      assert.equal(e.cause, cause);
      return true;
    });
  });
});
