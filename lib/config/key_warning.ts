/**
 * The warning `vf eval` and scripted runs (lib/script/start_eval.ts) print before the first model
 * call when the API key variable is unset.
 *
 * @module
 */
import { getEnv } from "../../kit/_runtime/env.ts";
import type { EvalConfig } from "./eval_config.ts";

/** Hosts known to refuse a call without an API key. */
const KEYED_HOSTS = new Set([
  "api.openai.com",
  "api.anthropic.com",
  "openrouter.ai",
  "api.pinference.ai",
  "api.together.xyz",
  "api.groq.com",
  "api.deepseek.com",
  "api.mistral.ai",
  "api.fireworks.ai",
  "generativelanguage.googleapis.com",
]);

/**
 * The warning printed before the first model call when the API key variable is unset
 * (null when it is set, or for the oracle). A warning, not an error: a local server may
 * need no key, and a harness may never call the model; a hosted endpoint known to need
 * one is named as such, and the end of the run reports the 401s it answers.
 */
export function missingKeyWarning(config: EvalConfig): string | null {
  if (config.model === "oracle") return null;
  const name = config.client.api_key_var;
  if (!name || getEnv(name)) return null;
  let host = "";
  try {
    host = new URL(config.client.base_url ?? "").hostname;
  } catch {
    return null; // the provider client reports a bad URL itself
  }
  const fix = `export ${name}=<your key>, or name the variable that holds it with ` +
    "--client.api-key-var <NAME>";
  return KEYED_HOSTS.has(host)
    ? `${name} is not set, and ${host} needs an API key: its calls will fail (${fix})`
    : `${name} is not set: calls to ${host} go without an API key (${fix})`;
}
