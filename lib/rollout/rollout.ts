/**
 * One rollout: provision the runtime, set the task up, let the harness drive the
 * model through the interception server, finalize, score, tear down — recording
 * everything in a {@link Trace}. Every failure becomes a typed trace error; a rollout
 * never throws for what happens inside it.
 *
 * @module
 */
import {
  errorMessage,
  HarnessError,
  type RolloutErrorType,
  SandboxError,
  TaskError,
  toTraceError,
} from "../../kit/errors.ts";
import type { HookContext } from "../../kit/contract.ts";
import type { Runtime } from "../../kit/runtime/runtime.ts";
import { promptText, type TaskData } from "../../kit/tasks/task_data.ts";
import type { Message, Trace, TraceTask } from "../../kit/trace/types.ts";
import { DeadlineExceeded, nowSeconds, withDeadline } from "./deadline.ts";
import { newTrace } from "./new_trace.ts";
import { scoreTrace } from "./scoring.ts";
import { sleepUnlessAborted } from "../../kit/util/sleep.ts";
import type { RetryPolicy } from "../config/eval_config.ts";
import type { RolloutPlan } from "./rollout_plan.ts";
import { agentRuntime, runAgent } from "./agent_stage.ts";
import { taskRuntimeConfig } from "./task_runtime.ts";
import { closeToolsets, openRolloutToolsets, toolsetStates } from "./toolset_stage.ts";
import type { ToolsetConnection } from "../../kit/mcp/connection.ts";

/** The resources each run's runtime lacks that a task asked for, warned about once. */
const WARNED = new WeakMap<RolloutPlan, Set<string>>();
function warnedFor(plan: RolloutPlan): Set<string> {
  let set = WARNED.get(plan);
  if (!set) WARNED.set(plan, set = new Set());
  return set;
}

export type { ClientConfigValue, RolloutPlan } from "./rollout_plan.ts";
export type { RetryPolicy, StageTimeouts } from "../config/eval_config.ts";

/** The initial conversation of a task, with the system prompt placed per the harness. */
export function initialMessages(task: TaskData, appendsSystemPrompt: boolean): Message[] {
  if (task.prompt === null || task.prompt === undefined) {
    throw new TaskError("task has no prompt", { hint: "a taskset must give every task a prompt" });
  }
  const system = task.system_prompt ?? null;
  const prompt: Message[] = typeof task.prompt === "string"
    ? [{ role: "user", content: task.prompt }]
    : structuredClone(task.prompt);
  if (!system) return prompt;
  if (appendsSystemPrompt) return [{ role: "system", content: system }, ...prompt];
  if (typeof task.prompt !== "string") {
    throw new TaskError(
      "this harness folds the system prompt into a text prompt, and the task's prompt is messages",
    );
  }
  return [{ role: "user", content: `${system}\n\n${promptText(task.prompt)}` }];
}

function pick(a: number | null | undefined, b: number | null | undefined): number | null {
  return a ?? b ?? null;
}

function recordError(trace: Trace, err: unknown, boundary: RolloutErrorType): void {
  const e = toTraceError(err, boundary);
  if (e.type === "RolloutError") e.type = boundary;
  trace.errors.push(e);
  trace.ok = false;
}

function retryable(trace: Trace, policy: RetryPolicy): boolean {
  if (trace.errors.length === 0) return false;
  const types = new Set(trace.errors.map((e) => e.type));
  for (const t of types) {
    if (policy.exclude.includes(t)) return false;
  }
  if (policy.include.length === 0) return true;
  return [...types].some((t) => policy.include.includes(t));
}

/** Backoff before retry `attempt` (0-based): `min(0.5·2^attempt, 30) × U(0.5, 1.5)` seconds. */
export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  return Math.min(0.5 * 2 ** attempt, 30) * (0.5 + random()) * 1000;
}

/** Runs one rollout with whole-rollout retries; the final trace keeps every attempt's errors. */
export async function runRollout(
  plan: RolloutPlan,
  task: TaskData,
  identity: TraceTask,
  signal: AbortSignal,
): Promise<Trace> {
  const earlier: Trace["errors"] = [];
  for (let attempt = 0;; attempt++) {
    const trace = await runOnce(plan, task, identity, signal);
    if (attempt >= plan.retries.max_retries || signal.aborted || !retryable(trace, plan.retries)) {
      trace.errors = [...earlier, ...trace.errors];
      if (earlier.length) trace.info.attempts = attempt + 1;
      return trace;
    }
    earlier.push(...trace.errors);
    plan.log(
      `rollout ${trace.id} failed (${trace.errors.map((e) => e.type).join(", ")}); retry ${
        attempt + 1
      }`,
    );
    await sleepUnlessAborted(retryDelayMs(attempt), signal);
  }
}

/** A rollout between its open and its close: the trace, the runtime, the stage budgets. */
export interface OpenRollout {
  trace: Trace;
  task: TaskData;
  /** Null when the runtime could not be made. */
  runtime: Runtime | null;
  timeouts: {
    setup: number | null;
    agent: number | null;
    finalize: number | null;
    scoring: number | null;
  };
  ctxFor(rt: Runtime | null, s: AbortSignal): HookContext;
  /** The task's MCP toolsets, connected once setup is done. */
  toolsets: ToolsetConnection[];
  /** The toolsets' state, read before they close: finalize and scoring see it. */
  states?: Record<string, unknown>;
}

/** A stage's throw on the trace, at the boundary it belongs to. */
export function recordStageError(trace: Trace, err: unknown): void {
  recordError(
    trace,
    err,
    err instanceof Error && err.name === "TaskError" ? "TaskError" : "SandboxError",
  );
}

async function runOnce(
  plan: RolloutPlan,
  task: TaskData,
  identity: TraceTask,
  signal: AbortSignal,
): Promise<Trace> {
  const open = await openRollout(plan, task, identity, signal);
  if (open.trace.errors.length === 0 && open.runtime) {
    try {
      const messages = initialMessages(task, plan.harness.capabilities.appendsSystemPrompt);
      const { runtime, trace, timeouts, ctxFor } = open;
      open.toolsets = await openRolloutToolsets(plan, task, signal);
      await runAgent(
        plan,
        trace,
        task,
        runtime,
        messages,
        timeouts.agent,
        signal,
        ctxFor,
        open.toolsets,
      );
    } catch (err) {
      recordStageError(open.trace, err);
    }
  }
  return await closeRollout(plan, open, signal);
}

/**
 * Opens a rollout: mints its trace, starts its runtime and runs the task's then the
 * harness's setup under one deadline; a failure is recorded on the trace (never thrown).
 */
export async function openRollout(
  plan: RolloutPlan,
  task: TaskData,
  identity: TraceTask,
  signal: AbortSignal,
): Promise<OpenRollout> {
  const trace = newTrace(identity, plan.agentConfig, plan.runtime.id, plan.role);
  trace.timing.start = nowSeconds();
  const t = task.timeout ?? {};
  const timeouts = {
    setup: pick(plan.timeouts.setup, t.setup),
    agent: pick(plan.timeouts.rollout, t.agent),
    finalize: pick(plan.timeouts.finalize, t.finalize),
    scoring: pick(plan.timeouts.scoring, t.scoring),
  };
  const ctxFor = (rt: Runtime | null, s: AbortSignal): HookContext => ({
    task,
    trace,
    runtime: rt,
    config: plan.tasksetConfig,
    signal: s,
    ...(open.states ? { toolsets: open.states } : {}),
  });
  const open: OpenRollout = { trace, task, runtime: null, timeouts, ctxFor, toolsets: [] };
  try {
    const runtimeConfig = taskRuntimeConfig(
      plan.runtime,
      plan.runtimeConfig,
      task,
      plan.warn,
      warnedFor(plan),
    );
    const runtime = open.runtime = plan.runtime.create(runtimeConfig, { name: trace.id });
    trace.timing.boot.start = nowSeconds();
    try {
      await runtime.start({ signal });
    } finally {
      trace.timing.boot.end = nowSeconds();
      trace.agent.runtime.id = runtime.info.id;
    }
    if (plan.harness.capabilities.needsContainer && runtime.isLocal) {
      throw new HarnessError(
        `harness '${plan.harness.id}' needs a container runtime, not '${plan.runtime.id}'`,
      );
    }
    await setupStage(plan, open, runtime, signal);
  } catch (err) {
    recordStageError(trace, err);
  }
  return open;
}

/** The task's then the harness's setup, under one deadline. */
async function setupStage(
  plan: RolloutPlan,
  open: OpenRollout,
  rt: Runtime,
  signal: AbortSignal,
): Promise<void> {
  const { trace, timeouts, ctxFor } = open;
  trace.timing.setup.start = nowSeconds();
  try {
    // no hooks, no stage: nothing could run, fail or time out under its deadline
    if (plan.taskset.setup || plan.harness.setup) {
      await withDeadline(timeouts.setup, signal, async (s) => {
        if (plan.taskset.setup) {
          try {
            await plan.taskset.setup(ctxFor(rt, s));
          } catch (err) {
            throw err instanceof DeadlineExceeded
              ? err
              : new TaskError(`task setup failed: ${errorMessage(err)}`);
          }
        }
        if (plan.harness.setup) {
          await plan.harness.setup(agentRuntime(plan, rt), plan.harnessConfig, s);
        }
      });
    }
  } catch (err) {
    if (err instanceof DeadlineExceeded) {
      throw new TaskError(`setup timed out after ${err.seconds}s`);
    }
    throw err instanceof TaskError
      ? err
      : new HarnessError(`harness setup failed: ${errorMessage(err)}`);
  } finally {
    trace.timing.setup.end = nowSeconds();
  }
}

/**
 * Closes a rollout: finalize then score (stopped runs still score) unless it failed, then
 * tears the runtime down; resolves with the finished trace.
 */
export async function closeRollout(
  plan: RolloutPlan,
  open: OpenRollout,
  signal: AbortSignal,
): Promise<Trace> {
  const { trace, runtime, timeouts, ctxFor } = open;
  const failed = trace.errors.length > 0;
  if (open.toolsets.length > 0) {
    // read before the servers stop; finalize and scoring see it
    if (!failed) open.states = await toolsetStates(open.toolsets, signal);
    await closeToolsets(open.toolsets);
  }
  if (!failed && !signal.aborted) {
    const finalize = plan.taskset.finalize;
    await closingStage(
      trace,
      "finalize",
      timeouts.finalize,
      signal,
      finalize && ((s) => finalize(ctxFor(runtime, s))),
    );
  }
  if (trace.errors.length === 0 && !signal.aborted) {
    await closingStage(
      trace,
      "scoring",
      timeouts.scoring,
      signal,
      (s) => scoreTrace(trace, ctxFor(runtime, s), plan.scoring),
    );
  }
  if (signal.aborted && trace.errors.length === 0) {
    recordError(trace, new HarnessError("rollout cancelled: the run is stopping"), "HarnessError");
  }

  // teardown
  if (runtime) {
    if (runtime.isLocal) await runtime.stop();
    else {
      try {
        await runtime.stopConfirmed();
      } catch (err) {
        recordError(
          trace,
          new SandboxError(`teardown not confirmed: ${errorMessage(err)}`),
          "SandboxError",
        );
      }
    }
  }
  trace.ok = trace.errors.length === 0;
  if (!trace.ok && trace.stop_condition === null) trace.stop_condition = "error";
  trace.is_completed = true;
  return trace;
}

/**
 * Runs a closing stage (`finalize`, `scoring`) under its deadline and times it on the trace
 * (also when there is nothing to run); a failure or the deadline is a `TaskError` on the trace.
 */
async function closingStage(
  trace: Trace,
  stage: "finalize" | "scoring",
  seconds: number | null,
  signal: AbortSignal,
  run: ((s: AbortSignal) => Promise<void>) | undefined,
): Promise<void> {
  trace.timing[stage].start = nowSeconds();
  try {
    if (run) await withDeadline(seconds, signal, run);
  } catch (err) {
    recordError(
      trace,
      err instanceof DeadlineExceeded
        ? new TaskError(`${stage} timed out after ${err.seconds}s`)
        : err,
      "TaskError",
    );
  } finally {
    trace.timing[stage].end = nowSeconds();
  }
}
