/**
 * Validating a plugin's own config where the plugin receives it, with errors that name
 * the plugin and the key.
 *
 * @module
 */
import type { z } from "zod";
import { ConfigError } from "./errors.ts";

/**
 * The parse options of a config read once: zod builds a compiled parser (`new Function`)
 * on an object schema's first parse, which costs more than the one parse it speeds up; a
 * config is parsed once per command or run, so it skips that fast path (bench/startup.ts
 * times the start it saves; docs/performance.md).
 */
export const ONE_OFF_PARSE = { jitless: true } as const;

/** Parses `config` with a plugin's schema; a {@link ConfigError} names `label` and each bad key. */
export function parsePluginConfig<S extends z.ZodType>(
  label: string,
  schema: S,
  config: unknown,
  hint: string,
): z.infer<S> {
  const parsed = schema.safeParse(config, ONE_OFF_PARSE);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((i) => `${label}: ${i.path.join(".") || "(config)"}: ${i.message}`),
    { hint },
  );
}
