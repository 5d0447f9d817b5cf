/**
 * The plugin contract. A plugin is a plain object `{kind, id, abi: 1, description,
 * config, ...behaviour}` made by {@link defineTaskset}, {@link defineHarness}, {@link defineJudge},
 * {@link defineRuntime} or `defineEnv` (env_contract.ts). Identity is structural (`kind` +
 * `abi`), never `instanceof`, so a bundle carrying its own copy of these helpers loads fine.
 *
 * The zod `config` schema holds the plugin's own keys only; verifiers-ts adds the
 * common keys of each kind (`id`, `task`, `type`, ...) around it.
 *
 * @module
 */
import type { z } from "zod";
import type { HarnessFields, JudgeFields, RuntimeFields, TasksetFields } from "./common_keys.ts";
import { parsePluginConfig } from "./parse_config.ts";
import type { ProgramResult, Runtime } from "./runtime/runtime.ts";
import type { LedgerEntry } from "./runtime/ledger.ts";
import type { AgentBundle } from "./harness/acp/install.ts";
import type { TaskData } from "./tasks/task_data.ts";
import type { Message, Trace } from "./trace/types.ts";
import type { EnvPlugin } from "./env_contract.ts";
import type { ToolsetSource } from "./mcp/source.ts";
import type { ToolsetConnection } from "./mcp/connection.ts";
import type { JudgePlugin } from "./judge_contract.ts";
import type { InterceptHook, RequestStopHook, ResponseStopHook } from "./intercept.ts";

/** Every plugin kind, in display order. */
export const PLUGIN_KINDS = ["taskset", "harness", "judge", "runtime", "env"] as const;

/** The kinds of plugin. */
export type PluginKind = (typeof PLUGIN_KINDS)[number];

/** Imports one plugin module (a literal `import()` so single-file builds embed it). */
export type PluginImporter = () => Promise<Record<string, unknown>>;

/** A set of built-in plugins: modules by kind and normalized id, and alias ids (alias → id). */
export interface BuiltinCatalog {
  modules: Record<PluginKind, Record<string, PluginImporter>>;
  aliases: Record<string, string>;
}

/** The plugin ABI version this build of verifiers-ts speaks. */
export const PLUGIN_ABI = 1;

/** A zod object schema describing a plugin's own config keys. */
// deno-lint-ignore no-explicit-any
export type ConfigSchema = z.ZodObject<any>;

/**
 * The validated values of a plugin's own keys (`{}` for a schema without keys, where zod
 * infers `Record<string, never>`, which would clash with the common keys).
 */
export type OwnConfig<S extends ConfigSchema> = S extends z.ZodObject<infer Shape>
  ? [keyof Shape] extends [never] ? Record<never, never> : z.output<S>
  : z.output<S>;

/**
 * A taskset's resolved config as its hooks receive it: the common keys of `env.taskset`
 * plus the plugin's own, typed by its schema `S` (validated, defaults filled).
 */
export type TasksetConfig<S extends ConfigSchema = ConfigSchema> = TasksetFields & OwnConfig<S>;
/** A harness's resolved config: the common keys of `env.agent.harness` plus its own. */
export type HarnessConfig<S extends ConfigSchema = ConfigSchema> = HarnessFields & OwnConfig<S>;
/** A judge entry's resolved config: the common keys of a judge entry plus its own. */
export type JudgeConfig<S extends ConfigSchema = ConfigSchema> = JudgeFields & OwnConfig<S>;
/** A runtime's resolved config: `type` plus the runtime's own keys. */
export type RuntimeConfig<S extends ConfigSchema = ConfigSchema> = RuntimeFields & OwnConfig<S>;

/** Fields every plugin has. */
export interface PluginBase<K extends PluginKind, S extends ConfigSchema = ConfigSchema> {
  kind: K;
  id: string;
  abi: 1;
  /** One line, shown by `vf plugins list`. */
  description: string;
  /** The plugin's own config keys (defaults, types, help text). */
  config: S;
}

/** What a hook gets: the task data, the trace so far, and the runtime when it is alive. */
export interface HookContext<C = TasksetConfig> {
  task: TaskData;
  trace: Trace;
  runtime: Runtime | null;
  /** The taskset's resolved config. */
  config: C;
  signal: AbortSignal;
  /**
   * The state of each of the rollout's toolsets by name, read once the agent stopped
   * (absent before; a server that keeps no readable state gives undefined).
   */
  toolsets?: Record<string, unknown>;
}

/** A value a reward or metric hook may return: one number, or several keyed numbers. */
export type ScoreValue = number | Record<string, number>;

/** A reward hook with its weight and ordering priority. */
export interface RewardHook<C = TasksetConfig> {
  fn(ctx: HookContext<C>): ScoreValue | Promise<ScoreValue>;
  /** @default 1 */
  weight?: number;
  /** Higher runs first. @default 0 */
  priority?: number;
  /** The hook reads `ctx.runtime`: a re-score without one (`vf replay`) skips it. */
  needsRuntime?: boolean;
}

/** A metric hook (unweighted). */
export interface MetricHook<C = TasksetConfig> {
  fn(ctx: HookContext<C>): ScoreValue | Promise<ScoreValue>;
  /** @default 0 */
  priority?: number;
  /** The hook reads `ctx.runtime`: a re-score without one (`vf replay`) skips it. */
  needsRuntime?: boolean;
}

/** A stop hook: checked before each model call; true stops the rollout under its name. */
export interface StopHook<C = TasksetConfig> {
  /** Checks the trace (the default); see kit/intercept.ts for request and response stops. */
  on?: "trace";
  fn(ctx: HookContext<C>): boolean | Promise<boolean>;
  /** @default 0 */
  priority?: number;
}

/** Any stop: on the trace before each call, or on a model request or response. */
export type AnyStopHook<C = TasksetConfig> = StopHook<C> | RequestStopHook<C> | ResponseStopHook<C>;

/** How the oracle model solves a task: a text answer, or shell commands then an answer. */
export interface Solution {
  /** Final assistant text. */
  text?: string;
  /** Commands the oracle runs through the harness's `bash` tool, in order. */
  commands?: string[];
}

/** Task behaviour shared by all tasks of a taskset whose resolved config is `C`. */
export interface TaskHooks<C = TasksetConfig> {
  /** Prepares the runtime for the task (counts against the setup timeout). */
  setup?(ctx: HookContext<C>): Promise<void>;
  /** Runs after the agent, before scoring (e.g. collect files). */
  finalize?(ctx: HookContext<C>): Promise<void>;
  /** Gold check: is the task solvable/set up right in this runtime? */
  validate?(ctx: HookContext<C>): Promise<boolean>;
  rewards?: Record<string, RewardHook<C>>;
  metrics?: Record<string, MetricHook<C>>;
  stops?: Record<string, AnyStopHook<C>>;
  /** Rewrite model requests and responses (kit/intercept.ts), by name. */
  intercepts?: Record<string, InterceptHook<C>>;
  /** The reference solution, used by the oracle model. */
  solution?(task: TaskData, config: C): Solution;
  /** Durable task key; defaults to the task hash. */
  key?(task: TaskData): string;
  /** Extra environment for commands of this task's runtime (not traced). */
  runtimeEnv?(task: TaskData): Record<string, string>;
  /**
   * The MCP toolsets a rollout of `task` gives the agent (Python's `Taskset.toolsets` and
   * `Task.toolsets`): TypeScript toolsets, servers started by command, servers at a URL.
   */
  toolsets?(task: TaskData, config: C): ToolsetSource[];
}

/** A taskset: config in, tasks out. `S` is the schema of its own config keys. */
export interface TasksetPlugin<S extends ConfigSchema = ConfigSchema>
  extends PluginBase<"taskset", S>, TaskHooks<TasksetConfig<S>> {
  /** True when `load()` never ends (a run must bound it with `-n`). */
  infinite?: boolean;
  /** True when tasks need a container runtime. */
  needsContainer?: boolean;
  /** Harness id used when the config pins none. @default "bash" */
  defaultHarness?: string;
  /** The task class name traces record as `task.type` (Python's `type(task).__name__`).
   * @default the id in PascalCase plus `Task` */
  taskType?: string;
  /** Loads the tasks: an array, an iterable or an async iterable (generators welcome). */
  load(
    config: TasksetConfig<S>,
  ): Iterable<TaskData> | AsyncIterable<TaskData> | Promise<Iterable<TaskData>>;
}

/** Capabilities a harness declares; the rollout reads them, never the id. */
export interface HarnessCapabilities {
  /** The agent can run code in the runtime. */
  executesCode: boolean;
  /** The harness refuses runtimes that are not containers. */
  needsContainer: boolean;
  /** The harness sends the system prompt as a system message (else it is folded). */
  appendsSystemPrompt: boolean;
  /** Offers a rollout's MCP toolsets to the model (a taskset with toolsets needs it). */
  toolsets?: boolean;
}

/** What a harness gets to run one rollout; `C` is the harness's resolved config. */
export interface HarnessLaunchContext<C = HarnessConfig> {
  runtime: Runtime;
  /** Interception endpoint including `/v1`, e.g. `http://127.0.0.1:4000/v1`. */
  endpoint: string;
  /** Per-rollout API key for the endpoint. */
  secret: string;
  /** Model name to send (the server replaces it anyway). */
  model: string;
  /** The initial conversation (system prompt already applied per capabilities). */
  messages: Message[];
  /** The harness's resolved config. */
  config: C;
  /** Aborted when the rollout's agent budget expires or the run is cancelled. */
  signal: AbortSignal;
  /** Logs a line to the run log. */
  log(message: string): void;
  /**
   * The trace's `info`, where a harness may record what its program reported (an ACP
   * agent's tool calls and reply under `acp`). Absent when the caller keeps no trace.
   */
  info?: Record<string, unknown>;
  /** The rollout's connected MCP toolsets (for a harness whose capabilities say `toolsets`). */
  toolsets?: ToolsetConnection[];
}

/** An agent program. `S` is the schema of its own config keys. */
export interface HarnessPlugin<S extends ConfigSchema = ConfigSchema>
  extends PluginBase<"harness", S> {
  capabilities: HarnessCapabilities;
  /**
   * The npm packages the harness installs into the host's agent cache (ACP agents), so
   * `vf harnesses install` and `prune` can name them.
   */
  agentBundle?: AgentBundle;
  /**
   * Names a model call the agent makes on its own (Claude Code's session title), else null:
   * the call is recorded with `auxiliary` set, and is not a turn, not the rollout's answer,
   * and a failure of it fails nothing.
   */
  auxiliaryCall?(request: { path: string; body: unknown }): string | null;
  /** Installs what the harness needs in the runtime (counts against the setup timeout). */
  setup?(runtime: Runtime, config: HarnessConfig<S>, signal: AbortSignal): Promise<void>;
  /** Runs the agent until it is done; every model call goes through `ctx.endpoint`. */
  launch(ctx: HarnessLaunchContext<HarnessConfig<S>>): Promise<ProgramResult>;
}

export type {
  JudgeCompleteOptions,
  JudgeCompletion,
  JudgeContext,
  JudgePlugin,
  JudgeResult,
  JudgeScore,
} from "./judge_contract.ts";
/** Runtime settings before validation: the `[env.agent.runtime]` table as given. */
export type RuntimeSettings = Readonly<Record<string, unknown>>;

/** Options given to a runtime factory. */
export interface RuntimeCreateOptions {
  /** A name for the instance (the trace id); providers may show it. */
  name: string;
  /** The run that owns the instance (its run directory), noted in the sandbox ledger. */
  run?: string | null;
  /** Where the runtime logs warnings (e.g. a first-use image build). @default no logging */
  log?: (message: string) => void;
}

/** A runtime type: makes {@link Runtime} instances from its config. `S`: its own keys. */
export interface RuntimePlugin<S extends ConfigSchema = ConfigSchema>
  extends PluginBase<"runtime", S> {
  /** True when instances run on this machine. */
  isLocal: boolean;
  /**
   * Makes an instance. `settings` may come from anywhere (`vf sandbox exec`, a script),
   * so the plugin made by {@link defineRuntime} validates them against `config` first
   * (a bad key is a ConfigError naming it) and hands its spec a {@link RuntimeConfig}.
   */
  create(settings: RuntimeSettings, options: RuntimeCreateOptions): Runtime;
  /** Checks a resolved config before any rollout (rules across keys); throws a ConfigError. */
  check?(settings: RuntimeSettings): void;
  /**
   * Remote runtimes: confirms the stop of a sandbox known only from its ledger entry
   * (`vf sandboxes gc`). Resolves when the provider confirmed it gone (an "already gone"
   * answer counts); throws otherwise.
   */
  stopById?(entry: LedgerEntry, options?: { log?: (message: string) => void }): Promise<void>;
  /**
   * Remote runtimes: the ids of the live sandboxes a pending ledger entry's create request
   * may have made (looked up by the entry's name and labels in the provider's own listing),
   * so `vf sandboxes gc` can stop them. An empty list means none is live.
   */
  findPending?(entry: LedgerEntry): Promise<string[]>;
}

/** Any plugin. */
export type Plugin = TasksetPlugin | HarnessPlugin | JudgePlugin | RuntimePlugin | EnvPlugin;

/** The plugin type of a kind. */
export type PluginOf<K extends PluginKind> = K extends "taskset" ? TasksetPlugin
  : K extends "harness" ? HarnessPlugin
  : K extends "judge" ? JudgePlugin
  : K extends "runtime" ? RuntimePlugin
  : EnvPlugin;

type Spec<P> = Omit<P, "kind" | "abi">;

/** What {@link defineRuntime} takes: the plugin, its hooks receiving the validated config. */
export type RuntimeSpec<S extends ConfigSchema> =
  & Omit<Spec<RuntimePlugin<S>>, "create" | "check">
  & {
    /** Makes an instance from the validated config. */
    create(config: RuntimeConfig<S>, options: RuntimeCreateOptions): Runtime;
    /** Checks a validated config (rules across keys); throws a ConfigError. */
    check?(config: RuntimeConfig<S>): void;
    /** The hint of the ConfigError a bad config gets. @default "run `vf plugins show <id>`" */
    configHint?: string;
  };

/**
 * Declares a taskset plugin. Its hooks receive `z.infer` of its `config` schema (plus the
 * common keys), already validated by the config pipeline.
 */
export function defineTaskset<S extends ConfigSchema>(
  spec: Spec<TasksetPlugin<S>>,
): TasksetPlugin<S> {
  return { ...spec, kind: "taskset", abi: 1 };
}

/** Declares a harness plugin; `setup` and `launch` receive its validated, typed config. */
export function defineHarness<S extends ConfigSchema>(
  spec: Spec<HarnessPlugin<S>>,
): HarnessPlugin<S> {
  return { ...spec, kind: "harness", abi: 1 };
}

/** Declares a judge plugin; `score` and `check` receive the validated, typed judge entry. */
export function defineJudge<S extends ConfigSchema>(spec: Spec<JudgePlugin<S>>): JudgePlugin<S> {
  return { ...spec, kind: "judge", abi: 1 };
}

/**
 * Declares a runtime plugin; its `id` is the `type` used in `[env.agent.runtime]`.
 * `create` and `check` receive the config validated against the plugin's own schema (a
 * bad key is a {@link ConfigError} naming it), so a runtime made outside the config
 * pipeline (`vf sandbox exec`, a script) is checked the same way. Settings are read-only:
 * a settings object is validated the first time it is used, not again for each instance.
 */
export function defineRuntime<S extends ConfigSchema>(spec: RuntimeSpec<S>): RuntimePlugin<S> {
  const { configHint, create, check, ...plugin } = spec;
  const hint = configHint ?? `run \`vf plugins show ${spec.id}\` to list the keys`;
  // A run creates one instance per rollout from the same settings object: it is validated
  // once (a failure is not kept, so it throws the same error every time), and each call
  // gets its own copy of the validated config.
  const checked = new WeakMap<RuntimeSettings, RuntimeConfig<S>>();
  const validated = (settings: RuntimeSettings): RuntimeConfig<S> => {
    let config = checked.get(settings);
    if (config === undefined) {
      config = {
        ...parsePluginConfig(`runtime "${spec.id}"`, spec.config, settings, hint),
        type: typeof settings.type === "string" ? settings.type : spec.id,
      } as RuntimeConfig<S>; // zod's output of a generic schema is not narrowed by OwnConfig
      checked.set(settings, config);
    }
    return { ...config };
  };
  return {
    ...plugin,
    kind: "runtime",
    abi: 1,
    create: (settings, options) => create.call(spec, validated(settings), options),
    ...(check
      ? { check: (settings: RuntimeSettings) => check.call(spec, validated(settings)) }
      : {}),
  };
}

/** Structural check: is `value` a plugin of any kind with a supported ABI? */
export function isPlugin(value: unknown): value is Plugin {
  if (typeof value !== "object" || value === null) return false;
  const v = value as { kind?: unknown; abi?: unknown; id?: unknown };
  return typeof v.kind === "string" && (PLUGIN_KINDS as readonly string[]).includes(v.kind) &&
    v.abi === PLUGIN_ABI && typeof v.id === "string";
}
