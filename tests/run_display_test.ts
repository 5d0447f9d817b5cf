import "./_builtins.ts";
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  createDisplay,
  formatDuration,
  isCiValue,
  plainLine,
  type ProgressSnapshot,
  resolveDisplayMode,
  richLines,
} from "../lib/cli/display.ts";
import { exceedsThreshold, renderSummary, type RunSummary } from "../lib/run/summary.ts";
import { at } from "./_assert.ts";

function snap(over: Partial<ProgressSnapshot> = {}): ProgressSnapshot {
  return {
    done: 50,
    total: 200,
    kept: 10,
    inFlight: 8,
    elapsedS: 20,
    reward: { mean: 0.75, mean_all: 0.6 },
    erroredTraces: 0,
    erroredEpisodes: 0,
    errors: [],
    ...over,
  };
}

describe("display modes", () => {
  it("auto is rich on a terminal, plain without one or in CI; explicit modes stay", () => {
    assert.equal(resolveDisplayMode("auto", { stderrIsTTY: true, ci: false }), "rich");
    assert.equal(resolveDisplayMode("auto", { stderrIsTTY: false, ci: false }), "plain");
    assert.equal(resolveDisplayMode("auto", { stderrIsTTY: true, ci: true }), "plain");
    assert.equal(resolveDisplayMode("rich", { stderrIsTTY: false, ci: true }), "rich");
    assert.equal(resolveDisplayMode("json", { stderrIsTTY: true, ci: false }), "json");
    assert.deepEqual(
      ["true", "1", "yes", "", "0", "false", "FALSE", undefined].map(isCiValue),
      [true, true, true, false, false, false, false, false],
    );
  });

  it("shows done/total, rate over this launch's episodes, ETA, reward, errors, in flight", () => {
    // 40 episodes run in 20 s (10 were kept) → 2/s; 150 left → 75 s
    assert.equal(
      plainLine(snap()),
      "progress 50/200 (25.0%) · 2.0/s · ETA 1m15s · elapsed 20s · reward 0.750 · err 0.000 · in flight 8",
    );
    const errored = plainLine(snap({
      erroredTraces: 5,
      erroredEpisodes: 5,
      errors: [{ type: "ProviderError", count: 5, last: "HTTP 500" }],
    }));
    assert.match(
      errored,
      /reward 0\.750 \(0\.600\) · err 0\.100 · in flight 8 · errors ProviderError 5$/,
    );
    assert.match(
      plainLine(snap({ done: 0, kept: 0, reward: { mean: null, mean_all: null } })),
      /ETA — .*reward —/,
    );
    assert.deepEqual([0, 59.4, 75, 3725].map(formatDuration), ["0s", "59s", "1m15s", "1h02m"]);
  });

  it("rich lines carry a bar and recent errors by type, cut to the terminal width", () => {
    const lines = richLines(
      snap({
        erroredTraces: 2,
        erroredEpisodes: 2,
        errors: [
          { type: "HarnessError", count: 2, last: "harness 'x' exited 1: " + "y".repeat(300) },
        ],
      }),
      false,
      80,
    );
    assert.equal(lines.length, 3);
    assert.match(at(lines, 0), /^█+░+ 50\/200 25\.0%/);
    assert.match(at(lines, 1), /^reward 0\.750 \(0\.600\) · err 0\.040 · 8 in flight$/);
    assert.match(at(lines, 2), /^ {2}HarnessError ×2 harness 'x' exited 1: y+…$/);
    for (const l of lines) assert.ok([...l].length <= 80, l);
    const colored = richLines(snap({ erroredEpisodes: 1 }), true, 80).join("\n");
    assert.ok(colored.includes("\x1b[31m0.020\x1b[0m"), "the error fraction in red");
  });

  it("the rich display redraws in place; the plain one only appends lines", () => {
    let out = "";
    let s = snap();
    const rich = createDisplay("rich", {
      header: ["vf eval · echo"],
      snapshot: () => s,
      write: (t) => (out += t),
      color: false,
      columns: () => 100,
      intervalMs: 60_000,
    });
    rich.start();
    s = snap({ done: 60 });
    rich.log("warning: something");
    rich.stop();
    // header, first frame (2 lines), then each redraw moves up 2 lines and clears
    assert.ok(out.startsWith("vf eval · echo\n"));
    assert.equal(out.split("\x1b[2F\x1b[J").length, 3, JSON.stringify(out));
    const afterLog = out.split("\x1b[2F\x1b[Jwarning: something\n")[1] ?? "";
    assert.match(afterLog, /60\/200/, "the log line is printed above a redrawn frame");
    assert.ok(out.trimEnd().endsWith("in flight"));

    let plain = "";
    const p = createDisplay("plain", {
      header: ["vf eval · echo"],
      snapshot: () => s,
      write: (t) => (plain += t),
      color: true,
      intervalMs: 60_000,
    });
    p.start();
    p.log("warning: x");
    p.stop();
    p.stop();
    assert.equal(plain.includes("\x1b"), false);
    assert.deepEqual(plain.trimEnd().split("\n").map((l) => l.split(" ")[0]), [
      "vf",
      "warning:",
      "progress",
    ]);
  });
});

describe("run summary", () => {
  it("reads a threshold below 1 as a fraction (above it fails) and from 1 up as a count", () => {
    assert.equal(exceedsThreshold(0, 0, 10), false);
    assert.equal(exceedsThreshold(0, 1, 10), true);
    assert.equal(exceedsThreshold(0.2, 2, 10), false);
    assert.equal(exceedsThreshold(0.2, 3, 10), true);
    assert.equal(exceedsThreshold(3, 2, 10), false);
    assert.equal(exceedsThreshold(3, 3, 10), true);
    assert.equal(exceedsThreshold(0.5, 0, 0), false);
  });

  it("the table names kept episodes, unconfirmed sandboxes and a failed threshold", () => {
    const s: RunSummary = {
      run: { name: "r", dir: "/o/r" },
      model: "m",
      taskset: "echo",
      harness: "null",
      runtime: "local",
      status: "completed",
      attempt: 2,
      counts: {
        episodes: 10,
        expected: 10,
        kept: 7,
        traces: 10,
        errored_episodes: 4,
        errored_traces: 4,
      },
      reward: { mean: 1, mean_all: 0.6 },
      error_fraction: 0.4,
      rewards: { echoed: 1 },
      metrics: {},
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        cached_input_tokens: 0,
        reasoning_tokens: 0,
        cost: 0.0123,
        judge_prompt_tokens: 0,
        judge_completion_tokens: 0,
      },
      turns_mean: 1,
      times_mean_s: {
        boot: 0.1,
        setup: 0,
        agent: 1,
        model: 0.9,
        harness: 0.1,
        finalize: 0,
        scoring: 0,
      },
      errors_by_type: { ProviderError: 4 },
      error_examples: {
        ProviderError: { message: "provider returned HTTP 429: slow down", status_code: 429 },
      },
      wall_time_s: 3,
      unconfirmed_sandboxes: [{ type: "prime", id: "sb-1", error: "HTTP 500" }],
      fail_on_error: { threshold: 0.3, exceeded: true },
      output_dir: "/o/r",
    };
    const table = renderSummary(s);
    assert.match(table, /^done +10\/10 episodes \(7 kept from earlier launches\) · 3\.0s$/m);
    assert.match(table, /^reward +1\.000 \(0\.600\)$/m);
    assert.match(table, /cost 0\.0123/);
    assert.match(table, /^sandboxes +1 not confirmed stopped: prime sb-1$/m);
    assert.match(table, /^failed +4 errored episodes exceed --fail-on-error 0\.3$/m);
  });
});
