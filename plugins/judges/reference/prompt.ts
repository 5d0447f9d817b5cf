/**
 * The `reference` judge's built-in prompt. Placeholders: `{question}`, `{answer}`,
 * `{response}` (each fenced by the judge), `{positive}`, `{negative}` (the verdict labels).
 *
 * @module
 */

/** The built-in template; a config `prompt` file replaces it (placeholders filled raw). */
export const REFERENCE_PROMPT =
  `You are checking a response against a reference answer. The response is correct when it agrees with the reference answer in substance; when several reference answers are listed, one per line, agreeing with any one of them is enough. Wording, formatting and extra explanation do not matter.

Task:
{question}

Reference answer:
{answer}

Response:
{response}

Respond either "{positive}" or "{negative}" only.
`;
