/**
 * Test helpers: minimal but complete {@link Trace} objects and hook contexts.
 *
 * @module
 */
import type {
  ConfigSchema,
  HarnessConfig,
  HarnessPlugin,
  HookContext,
  TasksetConfig,
} from "../kit/contract.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import type { Message, Trace } from "../kit/trace/types.ts";

const span = () => ({ start: 0, end: 0 });

/** A trace whose graph is one branch of `messages` (assistant messages are sampled). */
export function traceWithMessages(messages: Message[]): Trace {
  return {
    version: 1,
    id: "0123456789abcdef0123456789abcdef",
    verifiers: { version: "0.0.0-test", commit: null },
    task: { type: "TaskData", data: {}, key: "", hash: "" },
    agent: {
      config: {},
      runtime: { type: "subprocess", id: null, borrowed: false },
      name: "agent",
      trainable: true,
    },
    tools: [],
    nodes: messages.map((message, i) => ({
      parent: i === 0 ? null : i - 1,
      message,
      sampled: message.role === "assistant",
      timestamp: 1_700_000_000 + i,
    })),
    calls: [],
    request_rewrites: [],
    response_rewrites: [],
    rewards: {},
    metrics: {},
    info: {},
    extra_usage: [],
    is_completed: true,
    ok: true,
    stop_condition: "agent_completed",
    errors: [],
    timing: {
      start: 1_700_000_000,
      boot: span(),
      setup: span(),
      agent: { ...span(), model: { duration: 0 }, harness: { duration: 0 } },
      finalize: span(),
      scoring: span(),
    },
  };
}

/** A trace of one user prompt and one assistant reply `text`. */
export function traceWithReply(text: string, prompt = "prompt"): Trace {
  return traceWithMessages([
    { role: "user", content: prompt },
    { role: "assistant", content: text },
  ]);
}

/** A hook context for `task` and `trace` (runtime null unless given). */
export function hookContext(
  task: TaskData,
  trace: Trace,
  runtime: Runtime | null = null,
  config: TasksetConfig = { id: "", system_prompt: null },
): HookContext {
  return { task, trace, runtime, config, signal: new AbortController().signal };
}

/** A harness's config as the config pipeline resolves it: the common keys, then its own. */
export function harnessConfig<S extends ConfigSchema>(
  plugin: HarnessPlugin<S>,
  own: Record<string, unknown> = {},
): HarnessConfig<S> {
  const parsed = plugin.config.parse(own);
  return { id: plugin.id, env: {}, forward_env: [], ...parsed } as HarnessConfig<S>;
}
