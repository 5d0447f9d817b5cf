/**
 * The `rubric` judge: grades the rollout against weighted criteria read from a TOML or
 * JSON file, one judge call per batch of criteria. Each criterion's choices are ordered
 * worst to best and score rank / (n − 1); each score is a metric `<reward>/<criterion>`,
 * and the reward is their weighted mean.
 *
 * A reply that does not give exactly one allowed verdict per criterion of its batch is a
 * `TaskError` (a judge failure), never a 0.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parse as parseToml } from "smol-toml";
import { z } from "zod";
import {
  defineJudge,
  fence,
  JUDGE_VIEWS,
  judgeAnswer,
  type JudgeConfig,
  type JudgeContext,
  judgeQuestion,
  judgeResponse,
  type JudgeScore,
  renderTemplate,
  TaskError,
} from "../../../kit/mod.ts";
import { JSON_SUFFIX, REFERENCE_LABEL, RUBRIC_PROMPT } from "./prompt.ts";

/** Any number, infinite and NaN included (the rubric checks weights itself). */
const anyNumber = z.custom<number>((v) => typeof v === "number", { message: "expected a number" });

/** The `rubric` judge's own config keys. */
export const rubricJudgeConfig = z.object({
  path: z.string().min(1).describe(
    "Criteria file: TOML when it ends in .toml (any case), else JSON; a `criteria` list or a bare list",
  ),
  weights: z.record(z.string(), anyNumber).default({}).describe(
    "Per-criterion weight overrides by name (win over the file's)",
  ),
  question_field: z.string().default("").describe(
    "Task field filling {question} (empty = the task's prompt as text)",
  ),
  answer_field: z.string().default("").describe(
    "Task field with a reference solution to show the judge (empty = none)",
  ),
  view: z.enum(JUDGE_VIEWS).default("full_trace").describe(
    "What fills {response}: full_trace (the transcript) or last_reply (the final reply)",
  ),
  max_criteria: z.number().int().min(1, "`max_criteria` must be >= 1 or None").nullable()
    .default(null).describe(
      "Criteria per judge call (batches are graded concurrently; empty = all in one call)",
    ),
  structured_output: z.boolean().default(false).describe(
    "Ask for JSON-schema structured output (response_format) instead of JSON in plain text",
  ),
});

/** The resolved config of a `rubric` judge entry. */
export type RubricJudgeConfig = z.infer<typeof rubricJudgeConfig>;

/** One criterion of a rubric file. */
const criterionSchema = z.strictObject({
  name: z.string().min(1),
  text: z.string(),
  weight: anyNumber.default(1),
  choices: z.array(z.string()).default(["no", "yes"]).superRefine((v, ctx) => {
    if (v.length < 2) {
      ctx.addIssue({
        code: "custom",
        message: `\`choices\` needs at least two options, got ${JSON.stringify(v)}`,
      });
    } else if (new Set(v).size !== v.length) {
      ctx.addIssue({
        code: "custom",
        message: `\`choices\` has duplicate options: ${JSON.stringify(v)}`,
      });
    }
  }),
});

/** A criterion: its name, text, weight and choices ordered worst to best. */
export type Criterion = z.infer<typeof criterionSchema>;

function fail(message: string): never {
  throw new TaskError(message, { hint: "fix the rubric file or the judge's `weights`" });
}

function list(names: string[]): string {
  return JSON.stringify(names);
}

/**
 * Reads and checks a rubric file (`path` as configured; resolved against the working
 * directory) and applies the `weights` overrides. Throws a `TaskError` for an unreadable
 * or malformed file, a bad criterion, no criteria, duplicate names, overrides naming no
 * criterion, a negative or non-finite weight, or a total weight that is not positive and
 * finite.
 */
export function loadCriteria(path: string, weights: Record<string, number> = {}): Criterion[] {
  let text: string;
  try {
    text = readFileSync(resolve(path), "utf8");
  } catch (err) {
    fail(`cannot read rubric file '${path}': ${err instanceof Error ? err.message : err}`);
  }
  const toml = path.toLowerCase().endsWith(".toml");
  let data: unknown;
  try {
    data = toml ? parseToml(text) : JSON.parse(text);
  } catch (err) {
    fail(
      `rubric file '${path}' is not valid ${toml ? "TOML" : "JSON"}: ${
        err instanceof Error ? err.message : err
      }`,
    );
  }
  const isTable = typeof data === "object" && data !== null && !Array.isArray(data);
  const items = isTable ? (data as Record<string, unknown>).criteria ?? [] : data;
  if (!Array.isArray(items)) {
    fail(`rubric file '${path}' needs a \`criteria\` list (or to be a list)`);
  }
  const criteria = items.map((item, i) => {
    const r = criterionSchema.safeParse(item);
    if (!r.success) {
      const why = r.error.issues.map((e) =>
        (e.path.length ? `${e.path.join(".")}: ` : "") + e.message
      ).join("; ");
      fail(`rubric file '${path}', criterion ${i}: ${why}`);
    }
    return r.data;
  });
  if (criteria.length === 0) fail(`rubric file '${path}' lists no criteria`);
  const names = criteria.map((c) => c.name);
  const dup = names.filter((n, i) => names.indexOf(n) !== i);
  if (dup.length) {
    fail(`rubric file '${path}' has duplicate criterion names: ${list([...new Set(dup)])}`);
  }
  const unknown = Object.keys(weights).filter((n) => !names.includes(n)).sort();
  if (unknown.length) {
    fail(`\`weights\` overrides name no criterion in '${path}': ${list(unknown)}`);
  }
  const weighted = criteria.map((c) => ({
    ...c,
    weight: (Object.hasOwn(weights, c.name) ? weights[c.name] : undefined) ?? c.weight,
  }));
  const bad = weighted.filter((c) => !(c.weight >= 0 && c.weight < Infinity)).map((c) => c.name);
  if (bad.length) {
    fail(`rubric '${path}' has negative or non-finite criterion weights: ${list(bad)}`);
  }
  const total = weighted.reduce((s, c) => s + c.weight, 0);
  if (!(total > 0)) fail(`rubric '${path}' has no positive criterion weight`);
  if (!Number.isFinite(total)) fail(`rubric '${path}' has a non-finite total criterion weight`);
  return weighted;
}

/** One verdict of a judge reply. */
export interface CriterionVerdict {
  name: string;
  reason: string;
  verdict: string;
}

const verdictsSchema = z.object({
  verdicts: z.array(z.object({ name: z.string(), reason: z.string(), verdict: z.string() })),
});

/** The `response_format` of structured-output mode. */
export const VERDICTS_RESPONSE_FORMAT = {
  type: "json_schema",
  json_schema: {
    name: "rubric_verdicts",
    strict: true,
    schema: {
      type: "object",
      properties: {
        verdicts: {
          type: "array",
          items: {
            type: "object",
            properties: {
              name: { type: "string" },
              reason: { type: "string" },
              verdict: { type: "string" },
            },
            required: ["name", "reason", "verdict"],
            additionalProperties: false,
          },
        },
      },
      required: ["verdicts"],
      additionalProperties: false,
    },
  },
} as const;

/** End index (exclusive) of the balanced JSON object starting at `start`, or -1. */
function objectEnd(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * The verdicts of a plain-text judge reply: the first balanced JSON object with a
 * `verdicts` key (of the right shape) in the text after the last `</think>`. Throws a
 * `TaskError` when there is none.
 */
export function parseVerdictsText(text: string): CriterionVerdict[] {
  const open = text.includes("<think>") && !text.includes("</think>");
  const cut = text.lastIndexOf("</think>");
  const answer = open ? "" : cut >= 0 ? text.slice(cut + "</think>".length) : text;
  for (let i = answer.indexOf("{"); i >= 0; i = answer.indexOf("{", i + 1)) {
    const end = objectEnd(answer, i);
    if (end < 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(answer.slice(i, end));
    } catch {
      continue;
    }
    if (typeof value !== "object" || value === null || !("verdicts" in value)) continue;
    const r = verdictsSchema.safeParse(value);
    if (r.success) return r.data.verdicts;
  }
  const shown = text.length > 300 ? `${text.slice(0, 300)}...` : text;
  throw new TaskError(`judge returned no verdicts JSON object: ${JSON.stringify(shown)}`);
}

/** The verdicts of a structured-output reply (the whole text is the JSON object). */
function parseVerdictsStructured(text: string): CriterionVerdict[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const r = verdictsSchema.safeParse(value);
  if (!r.success) {
    const shown = text.length > 300 ? `${text.slice(0, 300)}...` : text;
    throw new TaskError(`judge returned no parseable structured output: ${JSON.stringify(shown)}`);
  }
  return r.data.verdicts;
}

/** The criterion line of a prompt: `- <name>: <text> (answer one of, worst to best: a, b)`. */
function criterionLine(c: Criterion): string {
  return `- ${c.name}: ${c.text} (answer one of, worst to best: ${c.choices.join(", ")})`;
}

/**
 * Scores a batch's verdicts: each criterion exactly once, each verdict one of its choices
 * (exact, else case-insensitive), scoring rank / (n − 1). Throws a `TaskError` otherwise.
 */
function scoreVerdicts(
  batch: Criterion[],
  verdicts: CriterionVerdict[],
): Record<string, number> {
  const byName = new Map(batch.map((c) => [c.name, c]));
  const got = verdicts.map((v) => v.name).sort();
  const want = [...byName.keys()].sort();
  if (got.length !== want.length || got.some((n, i) => n !== want[i])) {
    throw new TaskError(`judge verdicts name ${list(got)}, expected the batch's ${list(want)}`);
  }
  const scores: Record<string, number> = {};
  for (const v of verdicts) {
    const choices = byName.get(v.name)!.choices;
    let rank = choices.indexOf(v.verdict);
    if (rank < 0) {
      const folded = v.verdict.toLowerCase();
      rank = choices.findIndex((c) => c.toLowerCase() === folded);
    }
    if (rank < 0) {
      throw new TaskError(
        `judge answered ${JSON.stringify(v.verdict)} for '${v.name}', expected one of ${
          list(choices)
        }`,
      );
    }
    scores[v.name] = rank / (choices.length - 1);
  }
  return scores;
}

/** The prompt for one batch (built-in template: question and response fenced). */
function rubricPrompt(
  template: string | null,
  fields: { question: string; response: string; reference: string | null; batch: Criterion[] },
): string {
  const reference = fields.reference === null
    ? ""
    : `${REFERENCE_LABEL}\n${fence(fields.reference)}\n\n`;
  const own = template === null;
  return renderTemplate(template ?? RUBRIC_PROMPT, {
    question: own ? fence(fields.question) : fields.question,
    response: own ? fence(fields.response) : fields.response,
    criteria: fields.batch.map(criterionLine).join("\n"),
    reference,
  });
}

async function gradeBatch(
  ctx: JudgeContext,
  cfg: RubricJudgeConfig,
  batch: Criterion[],
  signal: AbortSignal,
): Promise<Record<string, number>> {
  const prompt = rubricPrompt(ctx.prompt, {
    question: judgeQuestion(ctx.task, cfg.question_field),
    response: judgeResponse(ctx.trace, cfg.view),
    reference: cfg.answer_field ? judgeAnswer(ctx.task, cfg.answer_field, "rubric") : null,
    batch,
  });
  const result = cfg.structured_output
    ? await ctx.complete([{ role: "user", content: prompt }], {
      responseFormat: VERDICTS_RESPONSE_FORMAT,
      parse: (text) => ({ verdicts: parseVerdictsStructured(text) }),
      signal,
    })
    : await ctx.complete([{ role: "user", content: prompt + JSON_SUFFIX }], {
      parse: (text) => ({ verdicts: parseVerdictsText(text) }),
      signal,
    });
  return scoreVerdicts(batch, (result.parsed as { verdicts: CriterionVerdict[] }).verdicts);
}

/**
 * Grades batches concurrently; the first failure cancels the other calls, and is thrown
 * once they have settled.
 */
async function gradeAll(
  batches: Criterion[][],
  grade: (batch: Criterion[], signal: AbortSignal) => Promise<Record<string, number>>,
): Promise<Record<string, number>> {
  const controllers: AbortController[] = [];
  let first: { error: unknown } | null = null;
  const runs = batches.map((b) => {
    const controller = new AbortController();
    controllers.push(controller);
    return grade(b, controller.signal).catch((error) => {
      if (!first) {
        first = { error };
        for (const c of controllers) c.abort(error);
      }
      throw error;
    });
  });
  const settled = await Promise.allSettled(runs);
  if (first) throw (first as { error: unknown }).error;
  const out: Record<string, number> = {};
  for (const s of settled) if (s.status === "fulfilled") Object.assign(out, s.value);
  return out;
}

/** Scores one trace with a `rubric` judge: the weighted mean and one metric per criterion. */
async function scoreRubric(
  ctx: JudgeContext<JudgeConfig<typeof rubricJudgeConfig>>,
): Promise<JudgeScore> {
  const cfg = ctx.judge;
  const criteria = loadCriteria(cfg.path, cfg.weights);
  const k = cfg.max_criteria;
  const batches = k === null
    ? [criteria]
    : Array.from({ length: Math.ceil(criteria.length / k) }, (_, i) =>
      criteria.slice(i * k, i * k + k));
  const scores = await gradeAll(batches, (batch, signal) => gradeBatch(ctx, cfg, batch, signal));
  const metrics: Record<string, number> = {};
  let total = 0;
  let sum = 0;
  for (const c of criteria) {
    const score = scores[c.name];
    if (score === undefined) throw new TaskError(`rubric judge gave no score for '${c.name}'`);
    metrics[`${ctx.rewardKey}/${c.name}`] = score;
    total += c.weight;
    sum += c.weight * score;
  }
  return { reward: sum / total, metrics };
}

/** The `rubric` judge plugin. */
export default defineJudge({
  id: "rubric",
  description: "LLM judge: weighted criteria from a TOML/JSON rubric file",
  config: rubricJudgeConfig,
  score: scoreRubric,
  check(config) {
    loadCriteria(config.path, config.weights);
  },
});
