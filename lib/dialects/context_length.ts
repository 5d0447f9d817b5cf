/**
 * Whether a provider's error says the prompt does not fit the model's context, in the words
 * OpenAI-compatible servers and Anthropic use ("maximum context length", "prompt is too
 * long", ...). Every dialect's `isContextLengthError`; the server then stops the rollout
 * with `context_length`.
 *
 * @module
 */

const CONTEXT_LENGTH_RE =
  /context[ _-]?length|maximum context|context window|prompt is too long|too many (input )?tokens/i;

/** True when an upstream error says the prompt does not fit the model's context. */
export function isContextLengthError(status: number, message: string): boolean {
  return (status === 400 || status === 413 || status === 422) && CONTEXT_LENGTH_RE.test(message);
}
