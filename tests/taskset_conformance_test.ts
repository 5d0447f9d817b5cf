/**
 * Every built-in taskset passes the taskset conformance suite.
 */
import { join } from "node:path";
import type { TasksetPlugin } from "../kit/contract.ts";
import { BUILTIN_PLUGINS } from "../plugins/builtins.ts";
import local from "../plugins/runtimes/local/mod.ts";
import { tasksetConformance } from "./conformance/taskset_conformance.ts";

/** The config keys without a default, per built-in taskset. */
const CONFIG: Record<string, Record<string, unknown>> = {
  jsonl: { path: join(import.meta.dirname!, "fixtures", "tasksets", "qa.jsonl") },
};

for (const [id, load] of Object.entries(BUILTIN_PLUGINS.modules.taskset)) {
  const plugin = (await load()).default as TasksetPlugin;
  tasksetConformance(id, {
    plugin,
    config: CONFIG[id] ?? {},
    makeRuntime: () => local.create({}, { name: `taskset-conformance-${id}` }),
  });
}
