/**
 * One check of a whole vf run against Python verifiers v1: every line against the schemas,
 * Python's resume selection as ported, and — where python3, pydantic and an upstream
 * checkout are present — Python's real models (episodes, task keys, the eval config,
 * `read_episodes`, resume).
 *
 * @module
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Episode } from "../kit/trace/types.ts";
import {
  copyRunDir,
  pythonResumeKeeps,
  realPythonUnavailable,
  runDirProblems,
  runRealPython,
} from "./_python_v1.ts";
import { traceLines } from "./_run.ts";
import { at } from "./_assert.ts";

/** Checks a run directory with Python's real models, or says visibly why it cannot. */
function checkWithRealPython(runDir: string, okIds: string[], keys: string[], rollouts: number) {
  const why = realPythonUnavailable();
  if (why) {
    console.log(`# skipped the real Python v1 models check: ${why}`);
    return;
  }
  const lines = traceLines(runDir);
  const answers = runRealPython([
    ...lines.map((l) => ({ kind: "episode", value: JSON.parse(l) })),
    ...lines.map((l) => ({ kind: "task_key", value: JSON.parse(l).task.data })),
    {
      kind: "eval_config",
      value: JSON.parse(readFileSync(join(runDir, "configs", "eval.json"), "utf8")),
    },
    { kind: "read_episodes", value: runDir },
    { kind: "resume", value: { dir: copyRunDir(runDir), keys, num_rollouts: rollouts } },
  ]);
  const n = lines.length;
  answers.slice(0, n).forEach((a, i) => assert.ok(a.ok, `line ${i + 1}: ${a.error}`));
  answers.slice(n, 2 * n).forEach((a, i) =>
    assert.equal(a.key, JSON.parse(at(lines, i)).task.hash, `task_key(task.data) of line ${i + 1}`)
  );
  const config = at(answers, 2 * n);
  const tasksetId = JSON.parse(readFileSync(join(runDir, "configs", "eval.json"), "utf8")).env
    .taskset.id;
  if (tasksetId === "reverse-text") assert.ok(config.ok, `EvalConfig: ${config.error}`);
  const read = at(answers, 2 * n + 1);
  assert.equal(read.count, n, `read_episodes: ${read.error}`);
  assert.deepEqual(at(answers, 2 * n + 2).kept?.sort(), [...okIds].sort(), "Python's resume keeps");
}

function selectedKeys(episodes: Episode[]): string[] {
  return [...new Set(episodes.map((e) => e.task.hash))];
}

/** Every check of one vf run: schemas, task keys, Python's resume selection, real models. */
export function assertExchangeable(out: { runDir: string; episodes: Episode[] }, rollouts = 1) {
  assert.deepEqual(runDirProblems(out.runDir), []);
  const okIds = out.episodes.filter((e) => e.ok).map((e) => e.id);
  const keys = selectedKeys(out.episodes);
  assert.deepEqual(
    pythonResumeKeeps(traceLines(out.runDir), keys, rollouts).sort(),
    [...okIds].sort(),
    "the ported resume loader keeps exactly the ok episodes",
  );
  checkWithRealPython(out.runDir, okIds, keys, rollouts);
}
