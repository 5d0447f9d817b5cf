/**
 * From a loaded config to the rollout plan shared by every rollout of a run: the
 * plugins' resolved configs, limits, timeouts, the scoring plan (task hooks with
 * config overrides, then judges) and the stop hooks.
 *
 * @module
 */
import { splitRuntimeConfig } from "../../kit/runtime/wire.ts";
import type { EvalConfig, JudgeEntry } from "../config/eval_config.ts";
import type { LoadedConfig } from "../config/load_config.ts";
import { InputError } from "../../kit/errors.ts";
import type { InterceptionServer } from "../interception/mod.ts";
import type { OracleServer } from "../clients/oracle.ts";
import type { ProviderClient } from "../clients/provider_client.ts";
import type { MetricHook, RewardHook, StopHook } from "../../kit/contract.ts";
import { configureJudge } from "../rollout/judge_context.ts";
import { applyPlugs } from "../plugins/plugged.ts";
import type { ClientConfigValue, RolloutPlan } from "../rollout/rollout.ts";
import { MASK, maskUrl } from "../../kit/secrets.ts";
import type { NamedMetric, NamedReward } from "../rollout/scoring.ts";
import { seatCalls } from "./seats.ts";
import type { Seat } from "../config/roles.ts";

/** Services a plan uses, made by the run. */
export interface PlanServices {
  client: ProviderClient;
  /** The client of a seat with its own (`env.agent.client`); the run's client otherwise. */
  seatClient?: ProviderClient | undefined;
  interception: InterceptionServer;
  oracle: OracleServer | null;
  log(message: string): void;
  warn(message: string): void;
}

/** A seat's own client as its trace records it (no secrets: URL userinfo and headers masked). */
function seatClientRecord(client: ClientConfigValue | null): Record<string, unknown> | null {
  if (!client) return null;
  const headers = Object.fromEntries(Object.keys(client.headers).map((k) => [k, MASK]));
  return {
    type: "eval",
    base_url: client.base_url === null ? null : maskUrl(client.base_url),
    api_key_var: client.api_key_var,
    headers,
  };
}

/**
 * The rollout plan of each of the env's roles, in its order (the first is `env.agent`'s):
 * the role's section, harness, runtime and client, the run's taskset and scoring.
 */
export function buildRolePlans(
  loaded: LoadedConfig,
  services: Omit<PlanServices, "seatClient">,
  clients: Readonly<Record<string, ProviderClient | undefined>>,
): Record<string, RolloutPlan> {
  const env = loaded.config.env as unknown as Record<string, Seat>;
  return Object.fromEntries(
    Object.entries(loaded.plugins.roles).map(([role, plugins]) => [
      role,
      buildRolloutPlan(
        { ...loaded, plugins: { ...loaded.plugins, ...plugins } },
        { ...services, seatClient: clients[role] },
        role,
        env[role] ?? env.agent!,
      ),
    ]),
  );
}

/** Builds the rollout plan of a loaded config's `seat` (`env.agent` unless given). */
export function buildRolloutPlan(
  loaded: LoadedConfig,
  services: PlanServices,
  role = "agent",
  seat: Seat = loaded.config.env.agent,
): RolloutPlan {
  const config: EvalConfig = loaded.config;
  const { taskset, harness, runtime, judges } = loaded.plugins;
  if (!taskset) throw new InputError("taskset_missing", "Cannot run: no taskset");
  const agent = seat;
  const task = config.env.taskset.task;
  const loads: Promise<unknown>[] = [];
  const plugOptions = { onLoadError: services.warn, loads, lock: loaded.lock };
  const rewards: NamedReward[] = applyPlugs<RewardHook>(
    "reward",
    taskset.rewards,
    task.rewards,
    plugOptions,
  );
  const metrics: NamedMetric[] = applyPlugs<MetricHook>(
    "metric",
    taskset.metrics,
    task.metrics,
    plugOptions,
  );
  // request and response stops run at the model boundary (kit/intercept.ts); TOML plugs
  // apply to the trace stops, the ones a plugged function can be
  const own = Object.entries(taskset.stops ?? {});
  const traceStops = Object.fromEntries(
    own.filter((e): e is [string, StopHook] => e[1].on === undefined || e[1].on === "trace"),
  );
  const stops = applyPlugs<StopHook>("stop", traceStops, task.stops, plugOptions);
  const boundaryStops = own.flatMap(([name, hook]) =>
    hook.on === "request" || hook.on === "response" ? [{ ...hook, name }] : []
  );
  const intercepts = Object.entries(taskset.intercepts ?? {}).map(([name, h]) => ({ ...h, name }));
  const fallbacks = {
    client: config.client,
    model: config.model!,
    runClient: services.client,
    interception: services.interception,
  };
  const configuredJudges = task.judges.map((entry: JudgeEntry, i: number) => {
    const plugin = judges[i];
    // loadEvalConfig loads one plugin per entry, in order
    if (!plugin) throw new Error(`judge ${i} ("${entry.id}") has no loaded plugin`);
    return configureJudge(plugin, entry, fallbacks);
  });
  // the runtime's cross-field rules (e.g. Prime idle_timeout <= timeout), before any rollout
  runtime.check?.(agent.runtime);
  const calls = seatCalls(config, agent);
  const ready = Promise.all(loads).then(() => {});
  ready.catch(() => {});
  return {
    role,
    ready,
    taskset,
    tasksetConfig: config.env.taskset,
    harness,
    harnessConfig: agent.harness,
    runtime,
    runtimeConfig: agent.runtime,
    agentConfig: structuredClone({
      ...agent,
      // Python's runtime configs forbid unknown keys: the trace carries only Python's.
      runtime: splitRuntimeConfig(agent.runtime).wire,
      model: calls.model,
      sampling: calls.sampling,
      client: seatClientRecord(calls.client),
    }),
    limits: {
      max_turns: agent.max_turns,
      max_input_tokens: agent.max_input_tokens,
      max_output_tokens: agent.max_output_tokens,
      max_total_tokens: agent.max_total_tokens,
    },
    timeouts: agent.timeout,
    retries: agent.retries,
    model: calls.model,
    sampling: calls.sampling,
    client: services.seatClient ?? services.client,
    interception: services.interception,
    oracle: services.oracle,
    scoring: { rewards, metrics, judges: configuredJudges },
    stops,
    boundaryStops,
    intercepts,
    log: services.log,
    warn: services.warn,
  };
}
