// The agent-load benchmark (bench/agent_load.ts) runs and prints its lines. Its figures are
// not checked: a benchmark's figures belong in docs/performance.md, never in a test.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { servedDialects } from "../bench/agent_load.ts";
import { runChild, scriptArgv } from "../bench/common.ts";

const SCRIPT = join(import.meta.dirname!, "..", "bench", "agent_load.ts");

describe("bench/agent_load.ts --quick", () => {
  it("measures every dialect against both floors and prints trace and RSS ratios", async () => {
    const out = await runChild(scriptArgv(SCRIPT, ["--quick"]));
    const lines = out.trim().split("\n");
    assert.match(lines[0] ?? "", /^agent load {2}6 rollouts × 4 turns, 3 in flight/);
    const dialects = servedDialects();
    assert.ok(dialects.includes("chat") && dialects.includes("anthropic"));
    for (const dialect of dialects) {
      const of = (pattern: RegExp) => {
        const line = lines.find((l) => l.includes(` ${dialect} `) && pattern.test(l));
        assert.ok(line, `no line for ${dialect} matching ${pattern}:\n${out}`);
        return [...line.matchAll(/(\d+\.\d+)(x| ms)/g)].map((m) => Number(m[1]));
      };
      const cpu = of(/CPU per call: pass-through/);
      assert.equal(cpu.length, 3);
      for (const v of cpu) assert.ok(v > 0, `a CPU figure of ${dialect} is ${v}`);
      assert.ok(of(/the recording floor \(target ≤ 1\.5x\)/).every((v) => v > 0));
      // the trace holds the conversation: it cannot be smaller than a third of it
      const [trace] = of(/trace bytes per rollout up to/);
      assert.ok(trace! > 0.3, `trace ratio ${trace}`);
      const rss = of(/vf peak RSS \d+ MB at 6 rollouts, \d+ MB at 12/);
      assert.ok(rss[0]! > 0, `peak RSS ratio ${rss[0]}`);
    }
  });
});
