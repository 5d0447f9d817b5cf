/**
 * The keys verifiers-ts adds around a plugin's own config keys, one zod shape per kind.
 * The config schema (`lib/config/eval_config.ts`) is built from them, and a plugin's
 * config type (`TasksetConfig`, `HarnessConfig`, ... in `kit/contract.ts`) is inferred
 * from them, so each is declared once.
 *
 * @module
 */
import { z } from "zod";

// The explicit zod types below keep the published package free of slow types (JSR): they
// are the types of the schemas as written (the compiler checks each against its value),
// and the config types are inferred from them.

/** A field that defaults to null. */
type NullableField<T extends z.ZodType> = z.ZodDefault<z.ZodNullable<T>>;
/** A string-to-string table that defaults to `{}`. */
type StringTable = z.ZodDefault<z.ZodRecord<z.ZodString, z.ZodString>>;

/** The base URL used when neither the config nor `$OPENAI_BASE_URL` gives one. */
export const DEFAULT_BASE_URL = "https://api.openai.com/v1";

/** Client fields shared by the run and by LLM judges. */
export const clientFields: {
  base_url: NullableField<z.ZodString>;
  api_key_var: z.ZodDefault<z.ZodString>;
  headers: StringTable;
} = {
  base_url: z.string().nullable().default(null).describe(
    `OpenAI-compatible base URL (default $OPENAI_BASE_URL, else ${DEFAULT_BASE_URL})`,
  ),
  api_key_var: z.string().default("OPENAI_API_KEY").describe(
    "Name of the environment variable holding the API key (the key itself is never stored)",
  ),
  headers: z.record(z.string(), z.string()).default({}).describe("Extra HTTP headers"),
};

/** Common keys of every judge entry (`env.taskset.task.judges[]`). */
export const JudgeBase: z.ZodObject<{
  id: z.ZodString;
  name: z.ZodDefault<z.ZodString>;
  weight: z.ZodDefault<z.ZodNumber>;
  base_url: NullableField<z.ZodString>;
  api_key_var: NullableField<z.ZodString>;
  headers: StringTable;
  model: NullableField<z.ZodString>;
  sampling: z.ZodDefault<z.ZodRecord<z.ZodString, z.ZodUnknown>>;
  prompt: NullableField<z.ZodString>;
}, z.core.$strict> = z.strictObject({
  id: z.string({
    error: (issue) => issue.input === undefined ? "a judge needs an `id`" : undefined,
  }).min(1, "a judge needs an `id`").describe("Judge id or specifier"),
  name: z.string().default("").describe("Reward key (default: the id's package name)"),
  weight: z.number().refine(Number.isFinite, "weight must be finite").default(1).describe(
    "Reward weight",
  ),
  base_url: clientFields.base_url.describe("Judge endpoint (default: the run's client)"),
  api_key_var: z.string().nullable().default(null).describe(
    "Judge API key variable (default: the run's)",
  ),
  headers: clientFields.headers,
  model: z.string().nullable().default(null).describe("Judge model (default: the run's model)"),
  sampling: z.record(z.string(), z.unknown()).default({}).describe("Judge sampling"),
  prompt: z.string().nullable().default(null).describe("Prompt template file"),
});

/** The common keys of a validated judge entry (see {@link JudgeBase}). */
export type JudgeFields = z.output<typeof JudgeBase>;

/** Common keys of `env.taskset` (besides `task`, which holds the engine's scoring tables). */
export const TasksetBase: {
  id: z.ZodDefault<z.ZodString>;
  system_prompt: NullableField<z.ZodString>;
} = {
  id: z.string().default("").describe("Taskset id or specifier"),
  system_prompt: z.string().nullable().default(null).describe(
    "File whose text replaces every task's system prompt",
  ),
};

/** Common keys of `env.agent.harness`. */
export const HarnessBase: {
  id: z.ZodDefault<z.ZodString>;
  env: StringTable;
  forward_env: z.ZodDefault<z.ZodArray<z.ZodString>>;
} = {
  id: z.string().default("bash").describe("Harness id or specifier"),
  env: z.record(z.string(), z.string()).default({}).describe("Environment for the agent program"),
  forward_env: z.array(z.string()).default([]).describe("Host variables copied in when set"),
};

/** Common keys of `env.agent.runtime`. */
export const RuntimeBase: { type: z.ZodDefault<z.ZodString> } = {
  type: z.string().default("subprocess").describe(
    "Runtime type: subprocess (alias local), prime, modal, or a specifier",
  ),
};

/** The validated values of a raw shape. */
type Fields<Shape extends z.ZodRawShape> = z.output<z.ZodObject<Shape>>;

/** The common keys of a validated `env.taskset` table. */
export type TasksetFields = Fields<typeof TasksetBase>;
/** The common keys of a validated `env.agent.harness` table. */
export type HarnessFields = Fields<typeof HarnessBase>;
/** The common keys of a validated `env.agent.runtime` table. */
export type RuntimeFields = Fields<typeof RuntimeBase>;
