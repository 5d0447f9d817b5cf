/**
 * verifiers-ts: run LLM evaluations and RL environments.
 *
 * This module is the library surface for people writing plugins and scripting runs:
 * the `define*` helpers, the plugin, runtime and trace types, the error classes,
 * {@link startEval} to run an evaluation from a script (see docs/scripting.md), and
 * {@link loadEvalConfig} to resolve a config exactly as `vf eval` does.
 *
 * ```ts
 * import { defineTaskset } from "@verifiers/verifiers-ts";
 * import { z } from "zod";
 *
 * export default defineTaskset({
 *   id: "greetings",
 *   description: "Say hello back",
 *   config: z.object({}),
 *   load: () => [{ prompt: "Say hello", answer: "hello" }],
 * });
 * ```
 *
 * @module
 */
import { installBuiltins } from "./lib/plugins/builtin_catalog.ts";
import { setSelfModule } from "./lib/plugins/self_modules.ts";
import { BUILTIN_PLUGINS } from "./plugins/builtins.ts";

// The library resolves built-in plugin ids like `vf` does.
installBuiltins(BUILTIN_PLUGINS);
setSelfModule(() => import("./mod.ts"));

/** Everything of the plugin kit (`@verifiers/verifiers-ts/kit`). */
export * from "./kit/mod.ts";
export { startEval } from "./lib/script/start_eval.ts";
export type { EvalResult, EvalRun, StartEvalOptions } from "./lib/script/start_eval.ts";
export type { RunSummary, UnconfirmedSandbox } from "./lib/run/summary.ts";
export { loadEvalConfig } from "./lib/config/load_config.ts";
export type { LoadedConfig, LoadEvalConfigOptions } from "./lib/config/load_config.ts";
export type { EvalConfig } from "./lib/config/eval_config.ts";
export { loadPlugin } from "./lib/plugins/load.ts";
