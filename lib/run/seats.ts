/**
 * A seat's model, client and sampling: its own where `env.<role>` sets them, else the
 * run's, as Python's `Env.run_episode` seats an agent (verifiers/v1/env.py@a60a606: seat
 * model and client else the run's, seat sampling deep-merged over the run's).
 *
 * @module
 */
import type { EvalConfig, SeatModel } from "../config/eval_config.ts";
import { mergeConfig } from "../config/merge.ts";
import type { ClientConfigValue } from "../rollout/rollout_plan.ts";

/** What a seat calls and how. */
export interface SeatCalls {
  model: string;
  /** The sampling sent: the run's with the seat's merged over it, unset keys left out. */
  sampling: Record<string, unknown>;
  /** The seat's client when it has its own, else null (the run's client serves it). */
  client: ClientConfigValue | null;
}

/** The model, sampling and client of a seat under the run's `config`. */
export function seatCalls(config: EvalConfig, seat: SeatModel): SeatCalls {
  const merged = mergeConfig(setKeys(config.sampling), setKeys(seat.sampling ?? {}));
  const sampling = setKeys(merged as Record<string, unknown>);
  const own = seat.client;
  const client = own && (own.base_url !== null || own.api_key_var !== null || own.headers)
    ? {
      base_url: own.base_url ?? config.client.base_url,
      api_key_var: own.api_key_var ?? config.client.api_key_var,
      headers: own.headers ?? config.client.headers,
      stall_timeout: config.client.stall_timeout,
    }
    : null;
  return { model: seat.model ?? config.model!, sampling, client };
}

/** The keys of a table that are set (not null). */
function setKeys(table: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(table).filter(([, v]) => v !== null));
}
