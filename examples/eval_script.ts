/**
 * An evaluation from a script: `vf run examples/eval_script.ts --tasks 5` runs the `echo`
 * taskset with the `oracle` model, prints each episode as it completes, then the mean
 * reward. Nothing is installed: under `vf run`, `@verifiers/verifiers-ts` is the running
 * vf's own copy (docs/scripting.md).
 *
 * @module
 */
import process from "node:process";
import { startEval } from "@verifiers/verifiers-ts";

const at = process.argv.indexOf("--tasks");
const tasks = at >= 0 ? Number(process.argv[at + 1]) : 3;
if (!Number.isInteger(tasks) || tasks < 1) {
  console.error("usage: vf run examples/eval_script.ts [--tasks <n>]");
  process.exit(2);
}

const run = await startEval({
  config: {
    env: { taskset: { id: "echo" }, agent: { harness: { id: "null" } } },
    model: "oracle",
    num_tasks: tasks,
    display: "none",
  },
  runDir: null,
});
for await (const episode of run) console.log(`episode ${episode.task.key} ok=${episode.ok}`);
const { summary } = await run.done;
console.log(`reward ${summary.reward.mean} over ${summary.counts.episodes} episodes`);
