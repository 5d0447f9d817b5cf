/**
 * The `rubric` judge's built-in prompt texts. Placeholders: `{question}`, `{response}`
 * (fenced by the judge), `{reference}` (a reference-solution block, or empty) and
 * `{criteria}` (one `- <name>: <text> (answer one of, worst to best: a, b)` line each).
 *
 * @module
 */

/** The built-in template; a config `prompt` file replaces it (placeholders filled raw). */
export const RUBRIC_PROMPT =
  `You are grading a response against a list of criteria. For each criterion, decide how well the response meets it.

Task:
{question}

{reference}Response:
{response}

Criteria:
{criteria}

Grade every criterion under its exact name, answering with exactly one of the options given in parentheses after it.
`;

/** The label of the reference-solution block (shown only when `answer_field` is set). */
export const REFERENCE_LABEL =
  "Reference solution (a correct answer to this task, shown for comparison):";

/**
 * Appended to the prompt when `structured_output` is off, so the reply is JSON the judge
 * can parse: one reasoned verdict per criterion.
 */
export const JSON_SUFFIX = `

Reply with a single JSON object and nothing else, shaped exactly like this:
{"verdicts": [{"name": "<criterion name>", "reason": "<one sentence pointing at evidence in the response>", "verdict": "<option>"}, ...]}
Give one entry per criterion under its exact name. Write the reason first, then set verdict to exactly one of the options listed in parentheses after that criterion.`;
