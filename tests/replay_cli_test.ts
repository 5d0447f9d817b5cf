/**
 * `vf replay` end to end: the Python-written golden run and a verifiers-ts run re-scored
 * with a rubric judge served by a loopback OpenAI fake, `-r` giving per-task judge variance,
 * outputs checked against Python v1's schemas, the source never written, bad input exit 2.
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./_cli.ts";
import { assertRealPythonLoadsEpisodes, episodeProblems, PYTHON_GOLDEN_RUN } from "./_python_v1.ts";
import { type FakeOpenAI, startFakeOpenAI } from "./fakes/openai_server.ts";

const LONG = { timeout: 120_000 };
const RUBRIC = join(import.meta.dirname!, "fixtures", "judges", "quickstart_rubric.json");
const KEY_VAR = "VF_REPLAY_JUDGE_KEY";
const KEY = "k-replay-judge";

/** Every file of a folder with its SHA-256 (the source must not change). */
function digest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    try {
      out[name] = createHash("sha256").update(readFileSync(path)).digest("hex");
    } catch { /* a folder */ }
  }
  return out;
}

function replayDirs(cwd: string, taskset: string): string[] {
  const root = join(cwd, "outputs", `${taskset}--replay`);
  return existsSync(root) ? readdirSync(root).map((n) => join(root, n)) : [];
}

describe("vf replay", () => {
  let judge: FakeOpenAI;
  let dir = "";
  before(async () => {
    // the judge model says "yes" to `always_yes` on every other call: scores vary
    judge = await startFakeOpenAI({
      apiKey: KEY,
      script: (_body, index) =>
        JSON.stringify({
          verdicts: [
            { name: "always_yes", reason: "scripted", verdict: index % 2 ? "no" : "yes" },
            { name: "effort", reason: "scripted", verdict: "some" },
          ],
        }),
    });
    dir = mkdtempSync(join(tmpdir(), "vf-replay-"));
    writeFileSync(
      join(dir, "judge.toml"),
      `[[taskset.task.judges]]
id = "rubric"
path = ${JSON.stringify(RUBRIC)}
base_url = ${JSON.stringify(judge.url)}
api_key_var = "${KEY_VAR}"
model = "judge-model"
`,
    );
  });
  after(async () => {
    await judge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it(
    "re-scores every trace of the Python golden run, -r 3 reporting variance per task",
    LONG,
    async () => {
      const source = join(dir, "golden");
      cpSync(PYTHON_GOLDEN_RUN, source, { recursive: true });
      const before = digest(source);
      const sent = judge.requests.length;
      const r = await runCli(
        ["replay", source, "@", "judge.toml", "-r", "3", "-c", "1", "--json"],
        {
          cwd: dir,
          env: { [KEY_VAR]: KEY },
        },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(digest(source), before, "the source run was written");
      const sourceTraces =
        readFileSync(join(source, "traces.jsonl"), "utf8").trim().split("\n").length;
      assert.equal(judge.requests.length - sent, sourceTraces * 3, "one judge call per rescore");
      const [out] = replayDirs(dir, "reverse-text");
      assert.ok(out, r.stdout);
      assert.match(out, /reverse-text--replay\/[0-9a-f-]{36}$/);
      const lines = readFileSync(join(out, "traces.jsonl"), "utf8").trim().split("\n");
      assert.equal(lines.length, sourceTraces * 3);
      for (const line of lines) assert.deepEqual(episodeProblems(line), []);
      assertRealPythonLoadsEpisodes(lines);
      const summary = JSON.parse(r.stdout);
      assert.deepEqual(JSON.parse(readFileSync(join(out, "summary.json"), "utf8")), summary);
      assert.equal(summary.scored, sourceTraces * 3);
      const sourceCalls = new Map<string, unknown>(
        readFileSync(join(source, "traces.jsonl"), "utf8").trim().split("\n").map((l) => {
          const t = JSON.parse(l).traces[0];
          return [t.id, t.calls];
        }),
      );
      const sessions = judge.requests.slice(sent).map((q) => q.headers["x-session-id"]);
      assert.deepEqual(
        [...new Set(sessions)].sort(),
        [...sourceCalls.keys()].sort(),
        "every judge call went through the interception server, in its trace's session",
      );
      const byKey = new Map<string, number[]>();
      for (const line of lines) {
        const trace = JSON.parse(line).traces[0];
        assert.ok(trace.rewards.rubric, JSON.stringify(trace.rewards));
        assert.equal(trace.info.judge.length, 1);
        assert.equal(trace.info.judge[0].model, "judge-model");
        // recorded by the interception server, and not among the agent's calls
        const call = trace.info.judge[0].call;
        assert.equal(call.auxiliary, "judge:rubric");
        assert.equal(call.model, "judge-model");
        assert.equal(call.error, null);
        assert.ok(call.usage.prompt_tokens > 0, JSON.stringify(call));
        assert.deepEqual(trace.calls, sourceCalls.get(trace.id), "the agent's calls as recorded");
        const total = Object.values(
          trace.rewards as Record<string, { score: number; weight: number }>,
        )
          .reduce((a, v) => a + v.score * v.weight, 0);
        byKey.set(trace.task.key, [...(byKey.get(trace.task.key) ?? []), total]);
      }
      assert.equal(summary.tasks.length, byKey.size);
      for (const t of summary.tasks) {
        assert.deepEqual(t.rewards, byKey.get(t.key));
        assert.equal(t.rewards.length, 3);
        const mean = t.rewards.reduce((a: number, b: number) => a + b, 0) / 3;
        assert.ok(Math.abs(t.mean - mean) < 1e-12);
        assert.ok(t.std > 0, `judge variance of task ${t.idx}: ${JSON.stringify(t)}`);
        assert.equal(t.source_rewards.length, 1);
      }
      const saved = JSON.parse(readFileSync(join(out, "configs", "replay.json"), "utf8"));
      assert.equal(saved.num_rescores, 3);
      assert.equal(saved.taskset.task.judges[0].id, "rubric");
    },
  );

  it("re-scores a verifiers-ts run, -n taking the first traces", LONG, async () => {
    const ev = await runCli([
      "eval",
      "reverse-text",
      "-m",
      "oracle",
      "-n",
      "3",
      "--run.name",
      "src",
      "--display",
      "none",
    ], {
      cwd: dir,
    });
    assert.equal(ev.code, 0, ev.stderr);
    const source = join(dir, "outputs", "src");
    const before = digest(source);
    const r = await runCli(["replay", "outputs/src", "-n", "2", "-o", "outputs/again", "--json"], {
      cwd: dir,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(digest(source), before);
    const lines = readFileSync(join(dir, "outputs", "again", "traces.jsonl"), "utf8").trim().split(
      "\n",
    );
    assert.equal(lines.length, 2);
    const src = readFileSync(join(source, "traces.jsonl"), "utf8").trim().split("\n").slice(0, 2);
    for (const [i, line] of lines.entries()) {
      assert.deepEqual(episodeProblems(line), []);
      const a = JSON.parse(line).traces[0];
      const b = JSON.parse(src[i]!).traces[0];
      assert.equal(a.id, b.id, "the same trace, re-scored");
      assert.deepEqual(a.rewards, b.rewards, "the taskset's own reward, recomputed offline");
    }
    const again = await runCli(["replay", "outputs/src", "-o", "outputs/again"], { cwd: dir });
    assert.equal(again.code, 2, "a replay folder with results is not overwritten");
  });

  it("skips the rewards that need a runtime, as Python's offline scoring does", LONG, async () => {
    const ev = await runCli(
      [
        "eval",
        "shell-basics",
        "-m",
        "oracle",
        "-n",
        "2",
        "--run.name",
        "shell",
        "--display",
        "none",
      ],
      { cwd: dir },
    );
    assert.equal(ev.code, 0, ev.stderr);
    const src = readFileSync(join(dir, "outputs", "shell", "traces.jsonl"), "utf8").trim().split(
      "\n",
    );
    assert.equal(JSON.parse(src[0]!).traces[0].rewards.passed.score, 1, "the source ran it");
    const r = await runCli(["replay", "outputs/shell", "-o", "outputs/shell-replay", "--json"], {
      cwd: dir,
    });
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout);
    assert.deepEqual(summary.skipped_signals, ["passed"]);
    assert.equal(summary.errored, 0);
    const lines = readFileSync(join(dir, "outputs", "shell-replay", "traces.jsonl"), "utf8")
      .trim().split("\n");
    for (const line of lines) {
      const trace = JSON.parse(line).traces[0];
      assert.deepEqual(trace.rewards, {}, "not run, not seeded");
      assert.deepEqual(trace.errors, []);
    }
  });

  it("refuses bad input with exit 2", LONG, async () => {
    for (
      const args of [
        ["replay"],
        ["replay", join(dir, "nowhere")],
        ["replay", PYTHON_GOLDEN_RUN, "-o", PYTHON_GOLDEN_RUN],
        ["replay", PYTHON_GOLDEN_RUN, "-r", "0"],
      ]
    ) {
      const r = await runCli(args, { cwd: dir });
      assert.equal(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }
  });
});
