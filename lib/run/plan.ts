/**
 * From a loaded config to the rollout plan shared by every rollout of a run: the
 * plugins' resolved configs, limits, timeouts, the scoring plan (task hooks with
 * config overrides, then judges) and the stop hooks.
 *
 * @module
 */
import type { EvalConfig, JudgeEntry } from "../config/eval_config.ts";
import type { LoadedConfig } from "../config/load_config.ts";
import { InputError } from "../errors.ts";
import type { InterceptionServer } from "../model/interception_server.ts";
import type { OracleServer } from "../model/oracle.ts";
import type { ProviderClient } from "../model/provider_client.ts";
import type { MetricHook, RewardHook, StopHook } from "../plugins/contract.ts";
import { configureJudge } from "../rollout/judge_context.ts";
import type { RolloutPlan } from "../rollout/rollout.ts";
import type { NamedMetric, NamedReward } from "../rollout/scoring.ts";

type Plugged = { fn: string | null; priority: number | null; weight?: number | null };

function applyPlugs<H extends { priority?: number; weight?: number }>(
  kind: "reward" | "metric" | "stop",
  own: Record<string, H> | undefined,
  plugs: Record<string, Plugged>,
): (H & { name: string })[] {
  const out = new Map<string, H & { name: string }>();
  for (const [name, hook] of Object.entries(own ?? {})) out.set(name, { ...hook, name });
  for (const [name, plug] of Object.entries(plugs)) {
    if (plug.fn !== null) {
      throw new InputError(
        "plugged_fn_unsupported",
        `Cannot plug ${kind} '${name}': loading functions from \`fn\` is not supported in this version`,
        {
          hint:
            "define the hook on the taskset, or leave `fn` unset to override weight/priority only",
        },
      );
    }
    const hook = out.get(name);
    if (!hook) {
      throw new InputError(
        "plugged_hook_unknown",
        `${kind} '${name}' plugs no \`fn\` and the task has no ${kind} named '${name}' to override`,
        { hint: `the taskset's ${kind}s: ${[...out.keys()].join(", ") || "none"}` },
      );
    }
    out.set(name, {
      ...hook,
      priority: plug.priority ?? hook.priority,
      ...(plug.weight !== undefined && plug.weight !== null ? { weight: plug.weight } : {}),
    });
  }
  return [...out.values()];
}

/** Services a plan uses, made by the run. */
export interface PlanServices {
  client: ProviderClient;
  interception: InterceptionServer;
  oracle: OracleServer | null;
  log(message: string): void;
  warn(message: string): void;
}

/** Builds the rollout plan of a loaded config. */
export function buildRolloutPlan(loaded: LoadedConfig, services: PlanServices): RolloutPlan {
  const config: EvalConfig = loaded.config;
  const { taskset, harness, runtime, judges } = loaded.plugins;
  if (!taskset) throw new InputError("taskset_missing", "Cannot run: no taskset");
  const agent = config.env.agent;
  const task = config.env.taskset.task;
  const rewards: NamedReward[] = applyPlugs<RewardHook>("reward", taskset.rewards, task.rewards);
  const metrics: NamedMetric[] = applyPlugs<MetricHook>("metric", taskset.metrics, task.metrics);
  const stops = applyPlugs<StopHook>("stop", taskset.stops, task.stops);
  const fallbacks = {
    client: config.client,
    model: config.model!,
    runClient: services.client,
  };
  const configuredJudges = task.judges.map((entry: JudgeEntry, i: number) =>
    configureJudge(judges[i], entry, fallbacks)
  );
  const sampling = Object.fromEntries(
    Object.entries(config.sampling).filter(([, v]) => v !== null),
  );
  return {
    taskset,
    tasksetConfig: config.env.taskset as Record<string, unknown>,
    harness,
    harnessConfig: agent.harness as Record<string, unknown>,
    runtime,
    runtimeConfig: agent.runtime as Record<string, unknown>,
    agentConfig: structuredClone({
      ...agent,
      model: config.model,
      sampling: config.sampling,
    }) as Record<string, unknown>,
    limits: {
      max_turns: agent.max_turns,
      max_input_tokens: agent.max_input_tokens,
      max_output_tokens: agent.max_output_tokens,
      max_total_tokens: agent.max_total_tokens,
    },
    timeouts: agent.timeout,
    retries: agent.retries,
    model: config.model!,
    sampling,
    client: services.client,
    interception: services.interception,
    oracle: services.oracle,
    scoring: { rewards, metrics, judges: configuredJudges },
    stops,
    log: services.log,
    warn: services.warn,
  };
}
