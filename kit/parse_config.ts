/**
 * Validating a plugin's own config where the plugin receives it, with errors that name
 * the plugin and the key.
 *
 * @module
 */
import type { z } from "zod";
import { ConfigError } from "./errors.ts";

/** Parses `config` with a plugin's schema; a {@link ConfigError} names `label` and each bad key. */
export function parsePluginConfig<S extends z.ZodType>(
  label: string,
  schema: S,
  config: unknown,
  hint: string,
): z.infer<S> {
  const parsed = schema.safeParse(config);
  if (parsed.success) return parsed.data;
  throw new ConfigError(
    parsed.error.issues.map((i) => `${label}: ${i.path.join(".") || "(config)"}: ${i.message}`),
    { hint },
  );
}
