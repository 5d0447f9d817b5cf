/**
 * The tail of what the agent program printed, kept on the trace whatever its exit code:
 * `trace.info.agent_output = {exit_code, stdout, stderr}` (`info` is the trace's free-form
 * record in Python `verifiers`, `verifiers/v1/trace.py@a60a606`). Each stream keeps its last
 * {@link AGENT_OUTPUT_TAIL_CHARS} characters (`…` marks a cut), with the rollout's known
 * secret values masked: the interception key the program was given, and the values of the
 * host's credential variables (names with KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL).
 *
 * @module
 */
import { getAllEnv } from "../_runtime/env.ts";

/** Characters kept from the end of each stream. */
export const AGENT_OUTPUT_TAIL_CHARS = 2000;

/** What a secret value becomes in a kept tail. */
const MASK = "***";

/** Values shorter than this are not masked (too common to scrub, too short to be keys). */
const MIN_SECRET_CHARS = 8;

const CREDENTIAL_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL)/i;
/** Names that locate a credential rather than hold one. */
const LOCATOR_NAME = /_(PATH|FILE|DIR|URL|HOST|PORT|TYPE|NAME)$/i;

/** The agent program's output as kept on a trace. */
export interface AgentOutput {
  exit_code: number;
  stdout: string;
  stderr: string;
}

/** The host's credential values (see the module doc), longest first. */
function hostSecrets(env: Record<string, string>): string[] {
  return Object.entries(env)
    .filter(([name, value]) =>
      CREDENTIAL_NAME.test(name) && !LOCATOR_NAME.test(name) && value.length >= MIN_SECRET_CHARS
    )
    .map(([, value]) => value);
}

/** Masks every secret in `text`, longest first (so one containing another goes whole). */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  const ordered = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_CHARS))]
    .sort((a, b) => b.length - a.length);
  for (const s of ordered) text = text.split(s).join(MASK);
  return text;
}

function tail(text: string, secrets: readonly string[]): string {
  // mask before cutting, so a cut never leaves half a secret unmasked
  const masked = maskSecrets(text, secrets);
  return masked.length > AGENT_OUTPUT_TAIL_CHARS
    ? "…" + masked.slice(-AGENT_OUTPUT_TAIL_CHARS)
    : masked;
}

/**
 * The bounded, masked tail of a program's result. `secrets` are the rollout's own (the
 * interception key); the host's credential values are added.
 */
export function agentOutput(
  result: { exitCode: number; stdout: string; stderr: string },
  secrets: readonly string[],
  env: Record<string, string> = getAllEnv(),
): AgentOutput {
  const all = [...secrets, ...hostSecrets(env)];
  return {
    exit_code: result.exitCode,
    stdout: tail(result.stdout ?? "", all),
    stderr: tail(result.stderr ?? "", all),
  };
}
