/**
 * The agent stage of a rollout: the harness runs under the agent budget (capped to the
 * runtime's lifetime) with an interception session of its own, and its result, the
 * session's provider error or the deadline decide how the stage ends.
 *
 * @module
 */
import { errorMessage, HarnessError, SandboxError } from "../../kit/errors.ts";
import type { HookContext, Solution } from "../../kit/contract.ts";
import { capHarnessTimeout, type Runtime } from "../../kit/runtime/runtime.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import type { Message, Trace } from "../../kit/trace/types.ts";
import { harnessEnv, withCommandEnv } from "../../kit/runtime/agent_env.ts";
import { DeadlineExceeded, nowSeconds, withDeadline } from "./deadline.ts";
import { agentOutput } from "./agent_output.ts";
import type { RolloutPlan } from "./rollout_plan.ts";
import { ordered, type SessionHooks } from "../interception/hooks.ts";
import type { ToolsetConnection } from "../../kit/mcp/connection.ts";

const TAIL_CHARS = 2000;

/**
 * Runs the harness for one rollout and records the agent's timing on the trace; throws a
 * typed error (`HarnessError`, `SandboxError`, `ProviderError`) when the stage fails.
 */
export async function runAgent(
  plan: RolloutPlan,
  trace: Trace,
  task: TaskData,
  runtime: Runtime,
  messages: Message[],
  agentTimeout: number | null,
  signal: AbortSignal,
  ctxFor: (rt: Runtime | null, s: AbortSignal) => HookContext,
  toolsets: ToolsetConnection[] = [],
): Promise<void> {
  const capped = capHarnessTimeout(agentTimeout, runtime);
  if (capped.capped) {
    plan.warn(
      `agent timeout ${
        agentTimeout ?? "none"
      }s capped to the runtime's lifetime: ${capped.timeoutS}s`,
    );
  }
  const budget = capped.timeoutS;
  if (plan.oracle) plan.oracle.register(trace.id, solutionFor(plan, task));
  const stops = [...plan.stops].sort((a, b) => (b.priority ?? 0) - (a.priority ?? 0));
  const hooks = sessionHooks(plan, () => ctxFor(runtime, signal));
  const session = plan.interception.open({
    trace,
    model: plan.model,
    sampling: plan.sampling,
    client: plan.client,
    limits: plan.limits,
    ...(plan.harness.auxiliaryCall
      ? { auxiliary: plan.harness.auxiliaryCall.bind(plan.harness) }
      : {}),
    ...(stops.length
      ? {
        stops: async () => {
          for (const s of stops) if (await s.fn(ctxFor(runtime, signal))) return s.name;
          return null;
        },
      }
      : {}),
    ...(hooks ? { hooks } : {}),
  });

  // an interaction runs the stage once a turn: the span covers them all, durations add up
  const turnStart = nowSeconds();
  if (!trace.timing.agent.start) trace.timing.agent.start = turnStart;
  try {
    const result = await withDeadline(budget, signal, (s) =>
      plan.harness.launch({
        runtime: agentRuntime(plan, runtime),
        endpoint: session.endpoint,
        secret: session.secret,
        model: plan.model,
        messages,
        config: plan.harnessConfig,
        signal: s,
        log: plan.log,
        info: trace.info,
        ...(toolsets.length > 0 ? { toolsets } : {}),
      }));
    if (plan.harness.capabilities.executesCode) {
      trace.info.agent_output = agentOutput(result, [session.secret]);
    }
    // A provider error no later call repaired fails the rollout whatever the program's exit
    // code: a program that swallows it must not turn it into a clean episode
    // (verifiers/v1/rollout.py@a60a606, `if self._session.error is not None`).
    if (session.providerError) throw session.providerError;
    // a hook that failed fails the rollout (verifiers/v1/interception/server.py@a60a606 `_fail`)
    if (session.hookError) throw session.hookError;
    if (result.exitCode !== 0 && session.stopCondition === null) {
      if (!(await runtime.alive())) {
        throw new SandboxError(
          `runtime died while harness '${plan.harness.id}' ran (exit ${result.exitCode})`,
        );
      }
      const tail = (result.stderr.trim() || result.stdout.trim()).slice(-TAIL_CHARS);
      throw new HarnessError(`harness '${plan.harness.id}' exited ${result.exitCode}: ${tail}`);
    }
    if (trace.stop_condition === null) trace.stop_condition = "agent_completed";
  } catch (err) {
    if (err instanceof DeadlineExceeded) {
      throw new HarnessError(`agent timeout: rollout exceeded its ${err.seconds}s budget`);
    }
    if (session.providerError && !(err instanceof HarnessError || err instanceof SandboxError)) {
      throw session.providerError;
    }
    if (session.hookError && !(err instanceof HarnessError || err instanceof SandboxError)) {
      throw session.hookError;
    }
    if (
      err instanceof Error &&
      (err.name === "TaskError" || err.name === "HarnessError" || err.name === "SandboxError" ||
        err.name === "ProviderError")
    ) {
      throw err;
    }
    throw new HarnessError(`harness '${plan.harness.id}' failed: ${errorMessage(err)}`);
  } finally {
    trace.timing.agent.end = nowSeconds();
    session.close();
    plan.oracle?.unregister(trace.id);
    const total = (trace.timing.agent.end ?? 0) - turnStart;
    trace.timing.agent.model.duration += session.modelSeconds;
    trace.timing.agent.harness.duration += Math.max(0, total - session.modelSeconds);
  }
}

/** The runtime as the harness sees it: its commands get the harness's `forward_env` and `env`. */
export function agentRuntime(plan: RolloutPlan, runtime: Runtime): Runtime {
  return withCommandEnv(runtime, harnessEnv(plan.harnessConfig));
}

function solutionFor(plan: RolloutPlan, task: TaskData): Solution {
  if (plan.taskset.solution) return plan.taskset.solution(task, plan.tasksetConfig);
  const answer = task.answer;
  return {
    text: Array.isArray(answer)
      ? String(answer[0] ?? "")
      : answer === undefined
      ? ""
      : String(answer),
  };
}

/** The taskset's interception hooks bound to the rollout's context, or none. */
function sessionHooks(plan: RolloutPlan, ctx: () => HookContext): SessionHooks | undefined {
  const intercepts = ordered(plan.intercepts ?? []);
  const stops = ordered(plan.boundaryStops ?? []);
  if (intercepts.length === 0 && stops.length === 0) return undefined;
  const hooks: SessionHooks = { request: [], response: [], requestStops: [], responseStops: [] };
  for (const h of intercepts) {
    if (h.on === "request") hooks.request.push({ name: h.name, fn: (r) => h.fn(r, ctx()) });
    else hooks.response.push({ name: h.name, fn: (r) => h.fn(r, ctx()) });
  }
  for (const h of stops) {
    if (h.on === "request") hooks.requestStops.push({ name: h.name, fn: (r) => h.fn(r, ctx()) });
    else hooks.responseStops.push({ name: h.name, fn: (r) => h.fn(r, ctx()) });
  }
  return hooks;
}
