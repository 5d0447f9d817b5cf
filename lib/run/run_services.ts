/**
 * The services every rollout of a run shares: the oracle (with `--model oracle`), the
 * provider client, the interception server, the runtime tracker and the rollout plan.
 *
 * @module
 */
import type { LoadedConfig } from "../config/load_config.ts";
import { startInterceptionServer } from "../interception/mod.ts";
import { DIALECTS } from "../dialects/mod.ts";
import { inProcessOracle } from "../clients/oracle.ts";
import { createProviderClient, stallMs } from "../clients/provider_client.ts";
import { buildRolePlans } from "./plan.ts";
import type { Seat } from "../config/roles.ts";
import type { ProviderClient } from "../clients/provider_client.ts";
import type { RolloutPlan } from "../rollout/rollout_plan.ts";
import type { RuntimePlugin } from "../../kit/contract.ts";
import { seatCalls } from "./seats.ts";
import type { CheckedInputs } from "./run_inputs.ts";
import type { RunLog } from "./run_log.ts";
import { RuntimeTracker } from "./runtime_tracker.ts";

/** The services every rollout of a run shares, with the plan built on them. */
export interface RunServices {
  tracker: RuntimeTracker;
  /** The first role's plan (`env.agent`). */
  plan: RolloutPlan;
  /** Every role's plan, in the env's order. */
  plans: Record<string, RolloutPlan>;
  /** Stops the oracle, the interception server and the provider client. */
  close(): Promise<void>;
}

/**
 * Step 4: the oracle (with `--model oracle`), the provider client, the interception
 * server and the rollout plan; a plugged function that cannot load refuses the run here,
 * before any rollout (the services are closed again).
 */
export async function startServices(
  loaded: LoadedConfig,
  inputs: CheckedInputs,
  runDir: string | null,
  runLog: RunLog,
): Promise<RunServices> {
  const { config } = loaded;
  const tracker = new RuntimeTracker();
  const oracle = config.model === "oracle" ? inProcessOracle() : null;
  const client = oracle ? oracle.client : createProviderClient({
    baseUrl: config.client.base_url!,
    apiKeyVar: config.client.api_key_var,
    headers: config.client.headers,
    stallTimeoutMs: stallMs(config.client.stall_timeout),
  });
  const sections = config.env as unknown as Record<string, Seat>;
  const seatClients: Record<string, ProviderClient | undefined> = {};
  for (const role of Object.keys(loaded.plugins.roles)) {
    const own = oracle ? null : seatCalls(config, sections[role] ?? config.env.agent).client;
    seatClients[role] = own
      ? createProviderClient({
        baseUrl: own.base_url!,
        apiKeyVar: own.api_key_var,
        headers: own.headers,
        stallTimeoutMs: stallMs(own.stall_timeout),
      })
      : undefined;
  }
  const { host, port, tunnel } = config.env.interception;
  const interception = await startInterceptionServer({
    providerDialects: config.client.dialects.map((id) => DIALECTS[id]!),
    providerImages: config.client.images,
    // a custom tunnel: every interface on its port, and programs use its URL (as Python)
    ...(tunnel?.type === "custom"
      ? { host: "0.0.0.0", port: tunnel.port, publicUrl: tunnel.url }
      : { host, port }),
    log: (level, m) => {
      if (level === "debug" && !config.verbose) return;
      runLog.logFile(level, m);
      if (config.verbose) runLog.say(m);
    },
  });
  const close = async () => {
    await interception.close();
    await oracle?.close();
    client.close();
    for (const c of Object.values(seatClients)) c?.close();
  };
  try {
    const wrap = (r: RuntimePlugin) => tracker.wrap(r, { run: runDir, log: runLog.warn });
    const plans = buildRolePlans(
      {
        ...loaded,
        config: { ...config, env: { ...config.env, taskset: inputs.tasksetConfig } },
        plugins: {
          ...loaded.plugins,
          roles: Object.fromEntries(
            Object.entries(loaded.plugins.roles).map((
              [role, p],
            ) => [role, { ...p, runtime: wrap(p.runtime) }]),
          ),
        },
      },
      { client, interception, oracle, log: runLog.log, warn: runLog.warn },
      seatClients,
    );
    const plan = Object.values(plans)[0]!;
    await Promise.all(Object.values(plans).map((p) => p.ready));
    return { tracker, plan, plans, close };
  } catch (err) {
    await close();
    throw err;
  }
}
