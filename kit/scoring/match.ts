/**
 * Deterministic answer matching (the `match` judge's logic): pick the answer out of a reply
 * with an extractor, then compare it with the reference answer(s) in one of five modes.
 *
 * Modes:
 * - `exact`: equal after trimming surrounding whitespace (case-insensitive when
 *   `caseSensitive` is false);
 * - `normalized`: equal after {@link normalizeText} (casefold, letters and digits only);
 * - `contains`: the normalized answer occurs in the normalized reply (raw trimmed substring
 *   when the answer has no letters or digits);
 * - `numeric`: the reply's number ({@link answerNumber}: `#### N`, `\boxed{N}`, else the last
 *   number; or the last number of the extracted text) is within `tolerance` of the answer:
 *   `|x − y| <= tolerance × max(1, |y|)`, i.e. absolute near zero and relative beyond 1;
 * - `regex`: the answer is a JavaScript regular expression searched anywhere in the reply
 *   (flag `i` unless `caseSensitive`; `u` always).
 *
 * Extractors: `none` (whole reply), `boxed`, `tag:<name>`, `last_line`, `last_number`. An
 * extractor that finds nothing makes the reply not match.
 *
 * @module
 */
import { TaskError } from "../errors.ts";
import {
  answerNumber,
  extractBoxed,
  extractTag,
  lastLine,
  lastNumber,
  parseNumber,
} from "./extract.ts";

/** How a reply is compared with the answer. */
export type MatchMode = "exact" | "normalized" | "contains" | "numeric" | "regex";

/** An extractor: `none`, `boxed`, `last_line`, `last_number` or `tag:<name>`. */
export type Extractor = "none" | "boxed" | "last_line" | "last_number" | `tag:${string}`;

/** Syntax of a valid extractor name. */
export const EXTRACTOR_RE = /^(?:none|boxed|last_line|last_number|tag:[A-Za-z_][\w.:-]*)$/;

/** Options of {@link matchAnswer}. */
export interface MatchOptions {
  /** @default "normalized" */
  mode?: MatchMode;
  /** @default "none" */
  extract?: Extractor | string;
  /** Numeric tolerance (see module doc). @default 1e-6 */
  tolerance?: number;
  /** Case sensitivity of `exact` and `regex`. @default true */
  caseSensitive?: boolean;
}

/** Casefolds (NFKC, upper then lower case) and keeps Unicode letters and digits only. */
export function normalizeText(text: string): string {
  return text.normalize("NFKC").toUpperCase().toLowerCase().replace(/[^\p{L}\p{N}]/gu, "");
}

/** Applies an extractor to a reply; `null` when it finds nothing. */
export function extractAnswer(reply: string, extract: string = "none"): string | null {
  if (extract === "none") return reply;
  if (extract === "boxed") return extractBoxed(reply);
  if (extract === "last_line") return lastLine(reply);
  if (extract === "last_number") {
    const n = lastNumber(reply);
    return n === null ? null : String(n);
  }
  if (extract.startsWith("tag:") && EXTRACTOR_RE.test(extract)) {
    return extractTag(reply, extract.slice(4));
  }
  throw new TypeError(
    `Cannot extract with "${extract}": expected none, boxed, tag:<name>, last_line or last_number`,
  );
}

/** Turns an answer value (string, number, boolean) into text; other types are refused. */
function answerText(answer: unknown): string {
  if (typeof answer === "string") return answer;
  if (typeof answer === "number" || typeof answer === "boolean" || typeof answer === "bigint") {
    return String(answer);
  }
  throw new TaskError(`match judge: answer must be a string or a number, got ${describe(answer)}`, {
    hint: "use a list for several acceptable answers",
  });
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return typeof v === "object" ? "an object" : typeof v;
}

function numbersClose(x: number, y: number, tolerance: number): boolean {
  return Math.abs(x - y) <= tolerance * Math.max(1, Math.abs(y));
}

function compileRegex(pattern: string, caseSensitive: boolean): RegExp {
  try {
    return new RegExp(pattern, caseSensitive ? "u" : "iu");
  } catch (err) {
    throw new TaskError(
      `match judge: invalid regex ${JSON.stringify(pattern)}: ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
}

/** True when one reference answer matches the reply (see the module doc for the rules). */
export function matchOne(reply: string, answer: string, options: MatchOptions = {}): boolean {
  const mode = options.mode ?? "normalized";
  const extract = options.extract ?? "none";
  const caseSensitive = options.caseSensitive ?? true;
  const candidate = extractAnswer(reply, extract);
  if (candidate === null) return false;
  switch (mode) {
    case "exact": {
      const [x, y] = [candidate.trim(), answer.trim()];
      return caseSensitive ? x === y : x.toLowerCase() === y.toLowerCase();
    }
    case "normalized":
      return normalizeText(candidate) === normalizeText(answer);
    case "contains": {
      const needle = normalizeText(answer);
      if (needle === "") return answer.trim() !== "" && candidate.includes(answer.trim());
      return normalizeText(candidate).includes(needle);
    }
    case "numeric": {
      const y = parseNumber(answer);
      if (y === null) {
        throw new TaskError(`match judge: answer ${JSON.stringify(answer)} is not a number`, {
          hint: "numeric mode needs numeric answers",
        });
      }
      const x = extract === "none" ? answerNumber(candidate) : lastNumber(candidate);
      return x !== null && numbersClose(x, y, options.tolerance ?? 1e-6);
    }
    case "regex":
      return compileRegex(answer, caseSensitive).test(candidate);
    default:
      throw new TypeError(`Cannot match in mode "${mode as string}"`);
  }
}

/**
 * Scores a reply against an answer value: 1 when it matches, else 0. A list answer means
 * "any of these" (an empty list never matches).
 */
export function matchAnswer(reply: string, answer: unknown, options: MatchOptions = {}): 0 | 1 {
  const answers = Array.isArray(answer) ? answer : [answer];
  for (const a of answers) if (matchOne(reply, answerText(a), options)) return 1;
  return 0;
}
