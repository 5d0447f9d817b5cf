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
export {
  defineHarness,
  defineJudge,
  defineRuntime,
  defineTaskset,
  isPlugin,
  PLUGIN_ABI,
  PLUGIN_KINDS,
} from "./lib/plugins/contract.ts";
export type {
  HarnessCapabilities,
  HarnessLaunchContext,
  HarnessPlugin,
  HookContext,
  JudgeCompleteOptions,
  JudgeCompletion,
  JudgeContext,
  JudgePlugin,
  JudgeResult,
  JudgeScore,
  MetricHook,
  Plugin,
  PluginKind,
  RewardHook,
  RuntimeCreateOptions,
  RuntimePlugin,
  ScoreValue,
  Solution,
  StopHook,
  TaskHooks,
  TasksetPlugin,
} from "./lib/plugins/contract.ts";
export type {
  ProgramResult,
  ReadOptions,
  RunOptions,
  Runtime,
  RuntimeInfo,
} from "./lib/runtime/runtime.ts";
export type { TaskData, TaskTimeout } from "./lib/tasks/task_data.ts";
export type { Episode, Message, MessageNode, ModelCall, Trace, Usage } from "./lib/trace/types.ts";
export { lastReply, numTurns, traceReward } from "./lib/trace/derived.ts";
export {
  ConfigError,
  HarnessError,
  InputError,
  PluginError,
  ProviderError,
  SandboxError,
  TaskError,
  VerifiersError,
} from "./lib/errors.ts";
export { startEval } from "./lib/script/start_eval.ts";
export type { EvalResult, EvalRun, StartEvalOptions } from "./lib/script/start_eval.ts";
export type { RunSummary, UnconfirmedSandbox } from "./lib/run/summary.ts";
export { loadEvalConfig } from "./lib/config/load_config.ts";
export type { LoadedConfig, LoadEvalConfigOptions } from "./lib/config/load_config.ts";
export type { EvalConfig } from "./lib/config/eval_config.ts";
export { loadPlugin } from "./lib/plugins/load.ts";
export { VERSION } from "./lib/version.ts";
export { parseJudgeChoice } from "./lib/scoring/judge_choice.ts";
export { renderTemplate } from "./lib/scoring/template.ts";
