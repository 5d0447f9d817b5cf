/**
 * The env contract: how one task becomes one episode. An env plugin, made by
 * {@link defineEnv}, runs the episode's agents (`run`) and may judge across the finished
 * traces (`finalize`), as Python verifiers v1's `Env` (verifiers/v1/env.py@a60a606). The
 * engine owns the rest: the episode record, its timeout and retries, the rollouts and
 * their scoring. `single-agent` (one run of the `agent` role) is the default env.
 *
 * ```ts
 * export default defineEnv({
 *   id: "twice",
 *   description: "Two attempts at each task",
 *   config: z.object({}),
 *   run: async ({ agents }) => void await Promise.all([agents.agent.run(), agents.agent.run()]),
 * });
 * ```
 *
 * @module
 */
import type { ConfigSchema, OwnConfig, PluginBase } from "./contract.ts";
import type { TaskData } from "./tasks/task_data.ts";
import type { Trace } from "./trace/types.ts";

/** The common keys of `[env]` an env sees (the taskset and roles have their own plugins). */
export interface EnvFields {
  /** The env id as configured (`""` for the default env). */
  id: string;
}

/** An env's resolved config: the common keys plus the plugin's own (`env.n`, ...). */
export type EnvConfig<S extends ConfigSchema = ConfigSchema> = EnvFields & OwnConfig<S>;

/** What one run of a role may change. */
export interface EnvRunOptions {
  /**
   * A task of the env's own to play instead of the episode's (a simulated user's, a
   * judge's minted from a solver's trace), as Python's bare `vf.Task(data)`: its own data
   * and hash on the trace, and none of the taskset's hooks (setup, stops, rewards, judges).
   * @default the episode's task
   */
  task?: TaskData;
  /**
   * Fields replaced in the episode's task for this run, which stays the taskset's task
   * (its hooks and scoring apply), as Python's `type(task)(data.model_copy(update=...))`:
   * `{ prompt: null }` is user-sim's assistant. The trace carries the changed data.
   */
  override?: Partial<TaskData>;
  /**
   * False for a role whose tokens are never training data (a simulated user, a judge):
   * its trace's `agent.trainable`. @default true
   */
  trainable?: boolean;
}

/** One role of an episode: each `run()` is one full rollout of a task, scored. */
export interface EnvAgent {
  /**
   * Runs the task once under the role's harness, model and runtime and resolves with the
   * scored trace (its `agent.name` is the role), which joins the episode in completion
   * order. A failed rollout is data on its trace (`ok: false`), never a throw.
   */
  run(options?: EnvRunOptions): Promise<Trace>;
  /**
   * Opens a conversation in which the env plays the other side (Python's
   * `Agent.interaction`): each `turn(message)` hands the agent a message and resolves with
   * its reply; `close()` ends it, scores the one trace of every turn and adds it to the
   * episode. A task without a prompt is fine here: the first turn opens the conversation.
   */
  interaction(options?: EnvRunOptions): Promise<EnvInteraction>;
}

/** One turn's outcome (Python's `Segment`). */
export interface EnvSegment {
  /** The agent's last reply of the turn ("" when it gave none). */
  lastReply: string;
  /** True when the rollout stopped (a limit such as `max_turns`, an error): no turn follows. */
  terminated: boolean;
}

/** A conversation with one role, the env speaking for the other side. */
export interface EnvInteraction {
  turn(message: string): Promise<EnvSegment>;
  /** Leaves the conversation (`stop_condition` `user_closed` unless it had stopped). */
  close(): Promise<Trace>;
}

/**
 * The episode's roles by name (`env.<role>.*` each), as Python's `Agents`. `agent` is the
 * env's first role (for `user-sim` the `assistant`), so an env with one role reads it there.
 */
export interface EnvAgents {
  readonly agent: EnvAgent;
  readonly [role: string]: EnvAgent;
}

/**
 * A role an env declares: its config section `env.<role>` takes the keys of `env.agent`
 * (harness, runtime, model, client, sampling, limits, timeouts, retries), over `defaults`.
 */
export interface EnvRole {
  /** What the role does (shown by `vf plugins show env <id>`). */
  description?: string;
  /**
   * The role's own defaults, as Python's role default instance (`AgentConfig(harness=
   * {"id": "null"}, max_turns=8)` is `{ harness: { id: "null" }, max_turns: 8 }`); the
   * config's `env.<role>` is merged over them.
   */
  defaults?: Readonly<Record<string, unknown>>;
}

/** The roles of an env that declares none: one `agent` (Python's `SingleAgentEnvConfig`). */
export const DEFAULT_ROLES: Readonly<Record<string, EnvRole>> = { agent: {} };

/** An env's roles in declaration order (the first is its primary role). */
export function envRoles(env: Pick<EnvPlugin, "roles">): [string, EnvRole][] {
  const roles = Object.entries(env.roles ?? DEFAULT_ROLES);
  return roles.length ? roles : Object.entries(DEFAULT_ROLES);
}

/** What an env's `run` gets for one episode. */
export interface EnvRunContext<C = EnvConfig> {
  task: TaskData;
  agents: EnvAgents;
  /** The env's resolved config. */
  config: C;
  /** Aborted when the episode's deadline passes or the run is cancelled. */
  signal: AbortSignal;
}

/** What an env's `finalize` gets: the episode's traces, completion order, to record into. */
export interface EnvFinalizeContext<C = EnvConfig> {
  task: TaskData;
  /** Every finished trace of the episode; record cross-trace results with {@link recordMetric}. */
  traces: Trace[];
  config: C;
  signal: AbortSignal;
}

/** An env: control flow among an episode's agents. `S` is the schema of its own keys. */
export interface EnvPlugin<S extends ConfigSchema = ConfigSchema> extends PluginBase<"env", S> {
  /**
   * Python's class name for the env (`BestOfNEnv`), used in episode errors such as
   * `BestOfNEnv.run() exceeded its 30s deadline`. @default the id in PascalCase plus `Env`
   */
  className?: string;
  /**
   * The env's roles by name, in order (Python's `AgentConfig` fields of the env config).
   * @default `{ agent: {} }`
   */
  roles?: Readonly<Record<string, EnvRole>>;
  /**
   * Plays one episode: runs the agents as the env's rules say. Every finished run joins
   * the episode; an episode must carry at least one. A throw fails the episode
   * (an `EnvError` in its `errors`, the finished traces kept).
   */
  run(ctx: EnvRunContext<EnvConfig<S>>): Promise<void>;
  /** Judges across the finished traces (within `env.timeout.finalize`); a throw fails it. */
  finalize?(ctx: EnvFinalizeContext<EnvConfig<S>>): Promise<void>;
}

/** Records `value` as the trace's metric `name` (as Python's `Trace.record_metric`). */
export function recordMetric(trace: Trace, name: string, value: number): void {
  trace.metrics[name] = value;
}

/** Python's class name of an env: its {@link EnvPlugin.className}, else `<PascalId>Env`. */
export function envClassName(env: Pick<EnvPlugin, "id" | "className">): string {
  if (env.className) return env.className;
  const pascal = env.id.split(/[-_\s]+/).map((w) => w.charAt(0).toUpperCase() + w.slice(1));
  return `${pascal.join("")}Env`;
}

/** Declares an env plugin; `run` and `finalize` receive its validated, typed config. */
export function defineEnv<S extends ConfigSchema>(
  spec: Omit<EnvPlugin<S>, "kind" | "abi">,
): EnvPlugin<S> {
  return { ...spec, kind: "env", abi: 1 };
}
