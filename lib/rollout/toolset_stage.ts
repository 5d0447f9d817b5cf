/**
 * A rollout's MCP toolsets: connected after setup, handed to the harness, their state read
 * once the agent stopped (the scoring sees it as `ctx.toolsets`), then closed, which stops
 * every server process the rollout started.
 *
 * @module
 */
import { errorMessage, HarnessError, TaskError } from "../../kit/errors.ts";
import type { TaskData } from "../../kit/tasks/task_data.ts";
import { checkSources } from "../../kit/mcp/source.ts";
import type { ToolsetConnection } from "../../kit/mcp/connection.ts";
import type { RolloutPlan } from "./rollout_plan.ts";

/** Seconds a toolset server gets to start and answer initialize and tools/list by default. */
export const TOOLSET_START_TIMEOUT_S = 60;

/** Seconds reading one toolset's state may take. */
const STATE_TIMEOUT_MS = 10_000;

/** Connects the toolsets `task` declares; none when it declares none. */
export async function openRolloutToolsets(
  plan: RolloutPlan,
  task: TaskData,
  signal: AbortSignal,
): Promise<ToolsetConnection[]> {
  const declare = plan.taskset.toolsets;
  if (!declare) return [];
  let sources;
  try {
    sources = checkSources(
      declare.call(plan.taskset, task, plan.tasksetConfig),
      `taskset '${plan.taskset.id}' toolsets`,
    );
  } catch (err) {
    throw new TaskError(`bad toolsets: ${errorMessage(err)}`);
  }
  if (sources.length === 0) return [];
  if (!plan.harness.capabilities.toolsets) {
    throw new HarnessError(
      `harness '${plan.harness.id}' cannot offer MCP toolsets to the model ` +
        `(the taskset declares ${sources.length}); use the bash or null harness`,
    );
  }
  // the SDK is loaded only by runs whose tasks have toolsets
  const { openToolset } = await import("../../kit/mcp/connection.ts");
  const opened: ToolsetConnection[] = [];
  try {
    for (const source of sources) {
      opened.push(
        await openToolset(source, {
          timeoutMs: (source.startTimeoutS ?? TOOLSET_START_TIMEOUT_S) * 1000,
          signal,
        }),
      );
    }
  } catch (err) {
    await closeToolsets(opened);
    throw err;
  }
  return opened;
}

/** Each toolset's state by name (skipped when the run is stopping). */
export async function toolsetStates(
  connections: ToolsetConnection[],
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (signal.aborted) return out;
  for (const c of connections) out[c.name] = await c.state(STATE_TIMEOUT_MS);
  return out;
}

/** Closes every connection (stopping the servers it started); never throws. */
export async function closeToolsets(connections: ToolsetConnection[]): Promise<void> {
  await Promise.allSettled(connections.map((c) => c.close()));
}
