/**
 * The config schemas (zod 4, strict objects), field for field as Python `verifiers`
 * v1 `EvalConfig` where a local run needs them. Plugin-specific keys are added by
 * {@link buildEvalConfigSchema} from the plugins the ids resolve to.
 *
 * @module
 */
import { z } from "zod";
import {
  clientFields,
  HarnessBase,
  type HarnessFields,
  JudgeBase,
  type JudgeFields,
  RuntimeBase,
  type RuntimeFields,
  TasksetBase,
} from "../../kit/common_keys.ts";
import type { ConfigSchema } from "../../kit/contract.ts";

export { DEFAULT_BASE_URL } from "../../kit/common_keys.ts";
export { HarnessBase, JudgeBase, type JudgeFields, RuntimeBase, TasksetBase };

/** A field that defaults to null (explicit zod types keep the package free of slow types). */
type NullableField<T extends z.ZodType> = z.ZodDefault<z.ZodNullable<T>>;
/** A list of strings that defaults to `[]`. */
type StringList = z.ZodDefault<z.ZodArray<z.ZodString>>;

const seconds = (): NullableField<z.ZodNumber> => z.number().positive().nullable().default(null);
const optInt = (what: string): NullableField<z.ZodNumber> =>
  z.number().int().min(1).nullable().default(null).describe(what);

/** Whole-rollout / whole-episode retry policy. */
const RetryConfig: z.ZodObject<{
  max_retries: z.ZodDefault<z.ZodNumber>;
  include: StringList;
  exclude: StringList;
}, z.core.$strict> = z.strictObject({
  max_retries: z.number().int().min(0).default(0).describe("Extra attempts after a failed one"),
  include: z.array(z.string()).default([]).describe(
    "Error type names to retry (empty = all)",
  ),
  exclude: z.array(z.string()).default([]).describe("Error type names never retried (wins)"),
});

/** A plugged scoring function: `{fn, priority[, weight]}`. */
const PluggedHook: z.ZodObject<{
  fn: NullableField<z.ZodString>;
  priority: NullableField<z.ZodNumber>;
}, z.core.$strict> = z.strictObject({
  fn: z.string().nullable().default(null).describe("path/to/file.ts:name, npm:pkg:name, URL:name"),
  priority: z.number().int().nullable().default(null).describe("Higher runs first"),
});

/** A plugged reward: a {@link PluggedHook} with a finite weight. */
const PluggedReward: z.ZodObject<{
  fn: NullableField<z.ZodString>;
  priority: NullableField<z.ZodNumber>;
  weight: NullableField<z.ZodNumber>;
}, z.core.$strict> = PluggedHook.extend({
  weight: z.number().refine(Number.isFinite, "weight must be finite").nullable().default(null)
    .describe("Reward weight"),
});

/** The model APIs a provider can serve (`client.dialects`), as lib/dialects/mod.ts names them. */
export const PROVIDER_DIALECTS = ["chat", "responses", "anthropic"] as const;

/** The run's model client. */
const ClientConfig = z.strictObject({
  ...clientFields,
  dialects: z.array(z.enum(PROVIDER_DIALECTS, {
    error: (issue) =>
      `unknown dialect ${JSON.stringify(issue.input)} (a provider serves ${
        PROVIDER_DIALECTS.join(", ")
      })`,
  })).min(1, "name at least one dialect the provider serves")
    .default([...PROVIDER_DIALECTS]).describe(
      "Model APIs the provider serves (chat, responses, anthropic); a program's other calls are translated",
    ),
  images: z.boolean().default(true).describe(
    "Whether the provider takes images; false refuses a model call carrying one before it is sent",
  ),
  stall_timeout: z.number().positive().nullable().default(600).describe(
    "Seconds without a byte from the provider before a model call fails (504); null waits forever",
  ),
});

/** Sampling settings: known keys typed, extra provider keys passed through. */
const SamplingConfig = z.object({
  temperature: z.number().nullable().default(null).describe("Sampling temperature"),
  top_p: z.number().nullable().default(null).describe("Nucleus sampling"),
  max_tokens: z.number().int().min(1).nullable().default(null).describe(
    "Max output tokens per call",
  ),
  reasoning_effort: z.string().nullable().default(null).describe("Reasoning effort"),
  seed: z.number().int().nullable().default(null).describe("Provider sampling seed"),
}).catchall(z.unknown());

/**
 * A seat's own client (`env.<role>.client`), as Python's `AgentConfig.client`: the keys it
 * sets replace the run's, the others are the run's (`type` is Python's union tag, `eval`).
 */
const SeatClientConfig = z.strictObject({
  type: z.literal("eval").optional().describe("Python's client kind (eval only)"),
  base_url: z.string().nullable().default(null).describe("Base URL (default: the run's)"),
  api_key_var: z.string().nullable().default(null).describe(
    "Variable holding the API key (default: the run's)",
  ),
  headers: z.record(z.string(), z.string()).nullable().default(null).describe(
    "Extra HTTP headers (default: the run's)",
  ),
});

/** A seat's client after validation (see {@link SeatClientConfig}; null = the run's). */
export interface SeatClient {
  type?: "eval" | undefined;
  base_url: string | null;
  api_key_var: string | null;
  headers: Record<string, string> | null;
}
// the interface is the schema's output, written out for the published types: kept equal
type SeatClientOutput = z.output<typeof SeatClientConfig>;
const _seatClientIsOutput: [SeatClient, SeatClientOutput] extends [SeatClientOutput, SeatClient]
  ? true
  : never = true;

/** A seat's model, client and sampling (null = the run's), as Python's `AgentConfig`. */
const SeatModelShape = {
  model: z.string().nullable().default(null).describe("The seat's model (default: the run's)"),
  client: SeatClientConfig.nullable().default(null).describe(
    "The seat's client (default: the run's)",
  ),
  sampling: SamplingConfig.nullable().default(null).describe(
    "The seat's sampling, merged over the run's",
  ),
};

/** A seat's model, client and sampling after validation (null = the run's). */
export type SeatModel = {
  model: string | null;
  client: SeatClient | null;
  sampling: EvalConfig["sampling"] | null;
};

/** A judge entry after validation: the common keys plus the judge's own. */
export type JudgeEntry = JudgeFields & Record<string, unknown>;

/** Common keys of the taskset table. */
function taskConfigSchema(judges: z.ZodType<JudgeEntry[]>) {
  return z.strictObject({
    judges,
    rewards: z.record(z.string(), PluggedReward).default({}).describe("Plugged rewards by name"),
    metrics: z.record(z.string(), PluggedHook).default({}).describe("Plugged metrics by name"),
    stops: z.record(z.string(), PluggedHook).default({}).describe(
      "Plugged stop conditions by name",
    ),
  });
}

/** The display modes. */
export const DISPLAY_MODES = ["auto", "rich", "plain", "json", "none"] as const;

/** The plugin schemas a narrowed config is built from (undefined = the common keys only). */
export interface NarrowingPlugins {
  taskset?: ConfigSchema | undefined;
  harness?: ConfigSchema | undefined;
  runtime?: ConfigSchema | undefined;
  env?: ConfigSchema | undefined;
  /** One entry per judge in the config, in order. */
  judges?: (ConfigSchema | undefined)[] | undefined;
  /**
   * The env's roles other than `agent` (`env.<role>`), each narrowed to its harness and
   * runtime; `harness`/`runtime` above narrow `env.agent`.
   */
  roles?: Readonly<Record<string, SeatPlugins>> | undefined;
}

/** The plugins one role's section is narrowed to. */
export interface SeatPlugins {
  harness?: ConfigSchema | undefined;
  runtime?: ConfigSchema | undefined;
}

/** The common keys of a kind plus a plugin's own (the type shows the common keys only). */
function extend<B extends z.ZodRawShape>(base: B, plugin: ConfigSchema | undefined) {
  const own: z.ZodRawShape = plugin ? plugin.shape : {};
  return z.strictObject({ ...base, ...own, ...base }) as unknown as z.ZodObject<B, z.core.$strict>;
}

/** A whole-rollout / whole-episode retry policy after validation (see {@link RetryConfig}). */
export type RetryPolicy = z.output<typeof RetryConfig>;

/** A plugged scoring function after validation (see {@link PluggedHook}). */
export type PluggedHookEntry = z.output<typeof PluggedHook>;

/** A plugged reward after validation (see {@link PluggedReward}). */
export type PluggedRewardEntry = z.output<typeof PluggedReward>;

/** Stage timeouts of one rollout, in seconds (null = none). */
const StageTimeoutsConfig: z.ZodObject<{
  setup: NullableField<z.ZodNumber>;
  rollout: NullableField<z.ZodNumber>;
  finalize: NullableField<z.ZodNumber>;
  scoring: NullableField<z.ZodNumber>;
}, z.core.$strict> = z.strictObject({
  setup: seconds().describe("Seconds for task and harness setup together"),
  rollout: seconds().describe("Seconds of agent time per rollout"),
  finalize: seconds().describe("Seconds for task finalize"),
  scoring: seconds().describe("Seconds for scoring"),
});

/** Stage timeouts after validation (see {@link StageTimeoutsConfig}). */
export type StageTimeouts = z.output<typeof StageTimeoutsConfig>;

/** Per-rollout limits, checked before each model call (null = no limit). */
const SessionLimitsShape: {
  max_turns: NullableField<z.ZodNumber>;
  max_input_tokens: NullableField<z.ZodNumber>;
  max_output_tokens: NullableField<z.ZodNumber>;
  max_total_tokens: NullableField<z.ZodNumber>;
} = {
  max_turns: optInt("Refuse model calls after this many turns"),
  max_input_tokens: optInt("Refuse model calls after this many input tokens"),
  max_output_tokens: optInt("Refuse model calls after this many output tokens"),
  max_total_tokens: optInt("Refuse model calls after this many tokens in all"),
};

/** Per-rollout limits after validation (see {@link SessionLimitsShape}). */
export type SessionLimits = z.output<z.ZodObject<typeof SessionLimitsShape>>;

/** How sandboxed programs reach the interception server (`tunnel`). */
export type InterceptionTunnel = { type: "relay" } | { type: "custom"; url: string; port: number };

/** `env.interception`: Python's keys (see docs/interception.md). */
export type InterceptionSettings = {
  type: "elastic" | "server" | "static";
  multiplex: number;
  servers?: unknown;
  host: string;
  port: number;
  tunnel: InterceptionTunnel | null;
};

const InterceptionConfig = z.strictObject({
  type: z.enum(["elastic", "server", "static"]).default("elastic").describe(
    "Python's server pool kind; one server carries every rollout here, whichever is named",
  ),
  multiplex: z.number().int().positive().default(32).describe(
    "Rollouts per server in Python's pool (one server here: accepted, no cap applied)",
  ),
  servers: z.unknown().optional().describe("Python's static pool (one server here)"),
  host: z.string().min(1).default("127.0.0.1").describe("Address the server binds"),
  port: z.number().int().min(0).max(65535).default(0).describe(
    "Port the server binds (0 = OS-chosen)",
  ),
  tunnel: z.discriminatedUnion("type", [
    z.strictObject({ type: z.literal("relay") }),
    z.strictObject({
      type: z.literal("custom"),
      url: z.url({ protocol: /^https?$/ }),
      port: z.number().int().min(1).max(65535),
    }),
  ]).nullable().default(null).describe(
    "How sandboxed programs reach the server: null or relay = the relay where they cannot " +
      "reach this host; custom = bind all interfaces on `port`, programs use `url`",
  ),
});

/**
 * The resolved config of a run: what {@link buildEvalConfigSchema}'s schema outputs, with
 * the plugins' own keys as extra fields of their tables (written out so that the public
 * type is explicit; `tests/eval_config_type_test.ts` checks it against the schema).
 */
export type EvalConfig = {
  env: {
    id: string;
    taskset: {
      id: string;
      system_prompt: string | null;
      task: {
        judges: JudgeEntry[];
        rewards: Record<string, PluggedRewardEntry>;
        metrics: Record<string, PluggedHookEntry>;
        stops: Record<string, PluggedHookEntry>;
      };
    };
    agent: SessionLimits & SeatModel & {
      harness: HarnessFields;
      runtime: RuntimeFields;
      timeout: StageTimeouts;
      retries: RetryPolicy;
    };
    timeout: { episode: number | null; finalize: number | null };
    retries: RetryPolicy;
    interception: InterceptionSettings;
  };
  model: string | null;
  client: {
    base_url: string | null;
    dialects: (typeof PROVIDER_DIALECTS)[number][];
    images: boolean;
    api_key_var: string;
    headers: Record<string, string>;
    stall_timeout: number | null;
  };
  sampling: {
    temperature: number | null;
    top_p: number | null;
    max_tokens: number | null;
    reasoning_effort: string | null;
    seed: number | null;
    [key: string]: unknown;
  };
  num_tasks: number | null;
  num_rollouts: number;
  max_concurrent: number;
  shuffle: boolean;
  seed: number | null;
  output_dir: string;
  run: { name: string | null; dir: string | null };
  shard: string | null;
  push: boolean;
  verbose: boolean;
  display: (typeof DISPLAY_MODES)[number];
  fail_on_error: number | null;
  dry_run: boolean;
  resume: boolean;
  clean: boolean;
  lock: boolean;
  frozen: boolean;
};

/** One seat's section (`env.agent`, `env.<role>`) narrowed to its harness and runtime. */
function seatSchema(plugins: SeatPlugins) {
  return z.strictObject({
    harness: extend(HarnessBase, plugins.harness).prefault({}),
    runtime: extend(RuntimeBase, plugins.runtime).prefault({}),
    ...SessionLimitsShape,
    ...SeatModelShape,
    timeout: StageTimeoutsConfig.prefault({}),
    retries: RetryConfig.prefault({}),
  });
}

/** Builds the `EvalConfig` schema narrowed to the given plugins' config keys. */
export function buildEvalConfigSchema(plugins: NarrowingPlugins = {}): z.ZodType<EvalConfig> {
  return evalConfigSchema(plugins);
}

/** The schema itself, with the type zod infers (checked against {@link EvalConfig}). */
export function evalConfigSchema(plugins: NarrowingPlugins = {}) {
  const judgeSchemas = (plugins.judges ?? []).map((j) => j ? JudgeBase.extend(j.shape) : JudgeBase);
  const judges =
    (judgeSchemas.length
      ? z.tuple(judgeSchemas as unknown as [z.ZodType, ...z.ZodType[]])
      : z.array(JudgeBase)).default([] as never).describe(
        "Judges scoring each rollout",
      ) as unknown as z.ZodType<
        JudgeEntry[]
      >;
  const taskset = extend(
    { ...TasksetBase, task: taskConfigSchema(judges).prefault({} as never) },
    plugins.taskset,
  );
  const agent = seatSchema(plugins);
  const roles = Object.fromEntries(
    Object.entries(plugins.roles ?? {}).map(([role, p]) => [
      role,
      seatSchema(p).prefault({}).describe(`The env's ${role} role`),
    ]),
  );
  const env = extend({
    ...roles,
    id: z.string().default("").describe("Env id (single-agent when empty)"),
    interception: InterceptionConfig.prefault({}),
    taskset: taskset.prefault({}),
    agent: agent.prefault({}),
    timeout: z.strictObject({
      episode: seconds().describe("Seconds per episode"),
      finalize: seconds().describe("Seconds for the env finalize hook"),
    }).prefault({}),
    retries: RetryConfig.prefault({}),
  }, plugins.env);
  return z.strictObject({
    env: env.prefault({}),
    model: z.string().nullable().default(null).describe(
      "Model name (`oracle` = reference answers)",
    ),
    client: ClientConfig.prefault({}),
    sampling: SamplingConfig.prefault({}),
    num_tasks: optInt("Number of tasks (after shuffling)"),
    num_rollouts: z.number().int().min(1).default(1).describe("Rollouts per task"),
    max_concurrent: z.number().int().min(1).default(128).describe("Episodes in flight"),
    shuffle: z.boolean().default(false).describe("Shuffle tasks before taking num_tasks"),
    seed: z.number().int().nullable().default(null).describe("Shuffle seed (default 0)"),
    output_dir: z.string().default("outputs").describe("Where run directories go"),
    run: z.strictObject({
      name: z.string().nullable().default(null).describe("Run name (default generated)"),
      dir: z.string().nullable().default(null).describe("Run directory under output_dir"),
    }).prefault({}),
    shard: z.string().regex(/^\s*(auto|\d+)\s*\/\s*\d+\s*$/, "expected <i>/<n> or auto/<n>")
      .nullable().default(null).describe(
        "Run shard i of n (`auto/<n>`: i from JOB_COMPLETION_INDEX or SLURM_ARRAY_TASK_ID)",
      ),
    push: z.boolean().default(false).describe(
      "Upload results: verifiers-ts has no results upload, so it must stay false (--no-push ok)",
    ),
    verbose: z.boolean().default(false).describe("Debug logging"),
    display: z.enum(DISPLAY_MODES).default("auto").describe(
      "Progress display: auto (rich on a terminal, plain otherwise or in CI), rich, plain, " +
        "json (final summary as JSON on stdout), none",
    ),
    fail_on_error: z.number().min(0).nullable().default(null).describe(
      "Exit 3 when too many episodes errored: below 1 a fraction (exceeded when the " +
        "errored fraction is above it), 1 and up a count",
    ),
    dry_run: z.boolean().default(false).describe("Validate, write configs/eval.json, exit"),
    resume: z.boolean().default(false).describe(
      "Continue the run in this run directory (`--resume <run-dir>` loads its configs/eval.json)",
    ),
    clean: z.boolean().default(false).describe("Delete the run directory first"),
    lock: z.boolean().default(false).describe(
      "Write/update vf.lock beside the config: version + integrity of fetched plugins",
    ),
    frozen: z.boolean().default(false).describe(
      "Refuse any change to vf.lock (a missing entry or a different resolution)",
    ),
  });
}

/** Root-level aliases (short flags and Python's alternative names). */
export const ROOT_ALIASES: Record<string, string> = {
  m: "model",
  n: "num_tasks",
  batch_size: "num_tasks",
  num_examples: "num_tasks",
  r: "num_rollouts",
  group_size: "num_rollouts",
  rollouts_per_example: "num_rollouts",
  c: "max_concurrent",
  s: "shuffle",
  v: "verbose",
  o: "output_dir",
};

/** Keys excluded from `configs/eval.json` (they steer one launch, not the run). */
export const LAUNCH_ONLY_KEYS = ["dry_run", "resume", "clean", "lock", "frozen"] as const;
