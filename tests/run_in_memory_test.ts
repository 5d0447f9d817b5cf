import "./_builtins.ts";
import assert from "node:assert/strict";
import { readdirSync, rmSync } from "node:fs";
import { describe, it } from "node:test";
import { runEval } from "../lib/run/run_eval.ts";
import type { Episode } from "../kit/trace/types.ts";
import { fastArgs, prepare, tmp } from "./_run.ts";

describe("in-memory runs (runDir null)", () => {
  it("hands every episode to onEpisode and writes nothing", async () => {
    const cwd = tmp();
    try {
      const p = await prepare([...fastArgs(7), "-r", "2"], cwd);
      const seen: Episode[] = [];
      const result = await runEval(p.loaded, {
        runDir: null,
        cwd,
        onEpisode: (e) => seen.push(e),
      });
      assert.equal(result.runDir, null);
      assert.equal(seen.length, 14);
      assert.equal(result.summary.counts.episodes, 14);
      assert.equal(new Set(seen.map((e) => e.task.hash)).size, 7);
      assert.deepEqual(readdirSync(cwd), [], "nothing written under the working directory");
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it("refuses --resume without a directory", async () => {
    const cwd = tmp();
    try {
      const p = await prepare(fastArgs(2), cwd);
      p.loaded.config.resume = true;
      await assert.rejects(
        runEval(p.loaded, { runDir: null, cwd }),
        (e: Error & { code?: string }) => e.code === "resume_needs_dir",
      );
    } finally {
      rmSync(cwd, { recursive: true, force: true });
    }
  });
});
