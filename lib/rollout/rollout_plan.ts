/**
 * What a rollout needs besides its task: the plan `lib/run/plan.ts` builds once per run and
 * every rollout of the run shares.
 *
 * @module
 */
import type { InterceptionServer } from "../interception/mod.ts";
import type { ProviderClient } from "../clients/provider_client.ts";
import type { OracleServer } from "../clients/oracle.ts";
import type {
  HarnessConfig,
  HarnessPlugin,
  RuntimeConfig,
  RuntimePlugin,
  StopHook,
  TasksetConfig,
  TasksetPlugin,
} from "../../kit/contract.ts";
import type { ScoringPlan } from "./scoring.ts";
import type { InterceptHook, RequestStopHook, ResponseStopHook } from "../../kit/intercept.ts";
import type { RetryPolicy, SessionLimits, StageTimeouts } from "../config/eval_config.ts";

/** The run's client config (no secrets: the key's variable name only). */
export interface ClientConfigValue {
  base_url: string | null;
  api_key_var: string;
  headers: Record<string, string>;
  /** Seconds of provider silence before a call fails; null = none. @default 600 */
  stall_timeout?: number | null;
}

export type { RetryPolicy, StageTimeouts } from "../config/eval_config.ts";

/** Everything a rollout needs besides its task; shared by all rollouts of a run. */
export interface RolloutPlan {
  /** The role the rollouts play (their trace's `agent.name`). @default "agent" */
  role?: string;
  taskset: TasksetPlugin;
  tasksetConfig: TasksetConfig;
  harness: HarnessPlugin;
  harnessConfig: HarnessConfig;
  runtime: RuntimePlugin;
  runtimeConfig: RuntimeConfig;
  /** The resolved agent config, recorded on each trace. */
  agentConfig: Record<string, unknown>;
  limits: SessionLimits;
  timeouts: StageTimeouts;
  retries: RetryPolicy;
  model: string;
  sampling: Record<string, unknown>;
  client: ProviderClient;
  interception: InterceptionServer;
  /** Set when the model is the oracle: solutions are registered per rollout. */
  oracle: OracleServer | null;
  scoring: ScoringPlan;
  stops: (StopHook & { name: string })[];
  /** The taskset's stops on a model request or response (kit/intercept.ts). @default none */
  boundaryStops?: ((RequestStopHook | ResponseStopHook) & { name: string })[];
  /** The taskset's interception hooks (kit/intercept.ts). @default none */
  intercepts?: (InterceptHook & { name: string })[];
  log(message: string): void;
  warn(message: string): void;
  /** Settles when every plugged function loaded; rejects (with the load error) otherwise. */
  ready?: Promise<void>;
}
