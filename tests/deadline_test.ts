import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { DeadlineExceeded, withDeadline } from "../lib/rollout/deadline.ts";
import { onAbort } from "../kit/util/on_abort.ts";

/** A promise that never settles: a step that ignores its signal. */
const never = () => new Promise<never>(() => {});

/** A step that rejects with its signal's reason once the signal aborts. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, "abort").length;

describe("withDeadline", () => {
  it("resolves with the step's value, its signal not aborted", async () => {
    const parent = new AbortController().signal;
    let seen: AbortSignal | null = null;
    const value = await withDeadline(5, parent, (s) => {
      seen = s;
      return Promise.resolve(42);
    });
    assert.equal(value, 42);
    assert.ok(seen !== null && seen !== parent);
    assert.equal((seen as AbortSignal).aborted, false);
  });

  it("rejects with the step's own error", async () => {
    const parent = new AbortController().signal;
    const boom = new Error("boom");
    await assert.rejects(withDeadline(null, parent, () => Promise.reject(boom)), (e) => e === boom);
  });

  it("rejects with DeadlineExceeded when the step ignores its signal, and aborts that signal with it", async () => {
    const parent = new AbortController().signal;
    let seen: AbortSignal | null = null;
    const err = await withDeadline(0.01, parent, (s) => {
      seen = s;
      return never();
    }).then(() => null, (e: unknown) => e);
    assert.ok(err instanceof DeadlineExceeded, `got ${err}`);
    assert.equal(err.seconds, 0.01);
    assert.equal(err.message, "deadline of 0.01s exceeded");
    assert.equal((seen as AbortSignal | null)?.reason, err);
  });

  it("passes the parent's abort reason to the step's signal and rejects with it, even when the step ignores it", async () => {
    for (const step of [never, untilAborted]) {
      const parent = new AbortController();
      const reason = new Error("run stopping");
      let seen: AbortSignal | null = null;
      const running = withDeadline(null, parent.signal, (s) => {
        seen = s;
        return step(s);
      });
      parent.abort(reason);
      await assert.rejects(running, (e) => e === reason);
      assert.equal((seen as AbortSignal | null)?.reason, reason);
    }
  });

  it("runs a step under an already aborted parent with an aborted signal and rejects with the reason", async () => {
    const parent = new AbortController();
    const reason = new Error("already stopped");
    parent.abort(reason);
    let ran = 0;
    await assert.rejects(
      withDeadline(5, parent.signal, async (s) => {
        ran++;
        assert.equal(s.reason, reason);
        await new Promise((r) => setTimeout(r, 1));
        return 1;
      }),
      (e) => e === reason,
    );
    assert.equal(ran, 1);
    assert.equal(abortListeners(parent.signal), 0);
  });

  it("aborts every step in flight under a parent, in the order they started", async () => {
    const parent = new AbortController();
    const order: number[] = [];
    const running = Array.from({ length: 20 }, (_, i) =>
      withDeadline(null, parent.signal, (s) => {
        s.addEventListener("abort", () => order.push(i), { once: true });
        return never();
      }).then(() => "resolved", (e: unknown) => e));
    const reason = new Error("stop");
    parent.abort(reason);
    const outcomes = await Promise.all(running);
    assert.ok(outcomes.every((o) => o === reason));
    assert.deepEqual(order, Array.from({ length: 20 }, (_, i) => i));
  });

  it("leaves no listener on the parent after many steps, whichever way each ended", async () => {
    const parent = new AbortController().signal;
    const steps: Promise<unknown>[] = [];
    for (let i = 0; i < 300; i++) {
      const kind = i % 3;
      steps.push(
        withDeadline(
          kind === 2 ? 0.001 : 5,
          parent,
          (s) =>
            kind === 0
              ? Promise.resolve(i)
              : kind === 1
              ? Promise.reject(new Error(`step ${i}`))
              : untilAborted(s),
        ).catch(() => null),
      );
      // a parent with steps in flight has exactly one listener for all of them
      assert.equal(abortListeners(parent), 1);
    }
    await Promise.all(steps);
    assert.equal(abortListeners(parent), 0);
    for (let i = 0; i < 300; i++) await withDeadline(null, parent, () => Promise.resolve(i));
    assert.equal(abortListeners(parent), 0);
  });
});

describe("onAbort", () => {
  it("calls each listener once with the reason, in the order added, through one listener on the signal", () => {
    const ctrl = new AbortController();
    const calls: string[] = [];
    const named = (name: string) => (reason: unknown) => calls.push(`${name}:${reason}`);
    const same = named("twice");
    onAbort(ctrl.signal, named("a"));
    const removeB = onAbort(ctrl.signal, named("b"));
    onAbort(ctrl.signal, same);
    onAbort(ctrl.signal, same);
    onAbort(ctrl.signal, named("c"));
    assert.equal(abortListeners(ctrl.signal), 1);
    removeB();
    removeB(); // a second removal changes nothing
    ctrl.abort("why");
    assert.deepEqual(calls, ["a:why", "twice:why", "twice:why", "c:why"]);
    assert.equal(abortListeners(ctrl.signal), 0);
  });

  it("leaves the signal without a listener once every listener is removed, and adds one again after", () => {
    const ctrl = new AbortController();
    const removals = Array.from({ length: 50 }, () => onAbort(ctrl.signal, () => {}));
    for (const remove of removals) remove();
    assert.equal(abortListeners(ctrl.signal), 0);
    let called = 0;
    onAbort(ctrl.signal, () => called++);
    assert.equal(abortListeners(ctrl.signal), 1);
    ctrl.abort();
    assert.equal(called, 1);
  });
});
