/**
 * The tail of what the agent program printed, kept on the trace whatever its exit code:
 * `trace.info.agent_output = {exit_code, stdout, stderr}` (`info` is the trace's free-form
 * record in Python `verifiers`, `verifiers/v1/trace.py@a60a606`). Each stream keeps its last
 * {@link AGENT_OUTPUT_TAIL_CHARS} characters (`…` marks a cut), secrets masked before the cut:
 * the rollout's own interception key, and every secret registered in `kit/secrets.ts` (the
 * host's credentials, the client's key and headers).
 *
 * @module
 */
import { MASK, redact } from "../../kit/secrets.ts";

/** Characters kept from the end of each stream. */
export const AGENT_OUTPUT_TAIL_CHARS = 2000;

/** The agent program's output as kept on a trace. */
export interface AgentOutput {
  exit_code: number;
  stdout: string;
  stderr: string;
}

function tail(text: string, rolloutSecrets: readonly string[]): string {
  // the rollout's key is masked here, not registered: registering one per rollout would
  // grow the process-wide list with the run
  let masked = text;
  for (const s of rolloutSecrets) if (s) masked = masked.split(s).join(MASK);
  masked = redact(masked);
  return masked.length > AGENT_OUTPUT_TAIL_CHARS
    ? "…" + masked.slice(-AGENT_OUTPUT_TAIL_CHARS)
    : masked;
}

/** The bounded, masked tail of a program's result; `rolloutSecrets` are the rollout's own. */
export function agentOutput(
  result: { exitCode: number; stdout: string; stderr: string },
  rolloutSecrets: readonly string[],
): AgentOutput {
  return {
    exit_code: result.exitCode,
    stdout: tail(result.stdout ?? "", rolloutSecrets),
    stderr: tail(result.stderr ?? "", rolloutSecrets),
  };
}
