/**
 * Reading a verdict label out of a judge model's reply (Python `parse_judge_choice`).
 *
 * @module
 */
import { TaskError } from "../errors.ts";
import { extractBoxed } from "./extract.ts";

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Horizontal whitespace (whitespace other than a newline). */
const HS = "[^\\S\\n]";

function allMatches(re: RegExp, text: string): string[] {
  return [...text.matchAll(re)].map((m) => m[1] ?? "");
}

/**
 * The choice a judge reply commits to, or `null` when it commits to none.
 *
 * - `null` for an empty reply or one whose `<think>` never closes; only the text after the
 *   last `</think>` counts.
 * - Matching is case-insensitive and word-bounded; the original spelling of the choice is
 *   returned.
 * - Preference, taking the last occurrence within the first kind that has one: a `FINAL
 *   JUDGMENT|ANSWER|VERDICT` line whose `\boxed{}` holds a choice; a `FINAL ...` line
 *   followed (after an optional `IS` and `:`/`-`) by a choice; a choice in the last
 *   `\boxed{}`; a `JUDGMENT|ANSWER|VERDICT` line followed by a choice; any choice in the
 *   text.
 */
export function parseJudgeChoice(
  content: string | null | undefined,
  choices: readonly string[] = ["A", "B", "C"],
): string | null {
  if (!content || (content.includes("<think>") && !content.includes("</think>"))) return null;
  const cut = content.lastIndexOf("</think>");
  const text = (cut >= 0 ? content.slice(cut + "</think>".length) : content).trim();
  const upper = text.toUpperCase();
  const byUpper = new Map<string, string>();
  for (const c of choices) byUpper.set(c.toUpperCase(), c);
  if (byUpper.size === 0) return null;
  const allowed = [...byUpper.keys()].map(escapeRegExp).join("|");
  const choice = `(?<![\\p{L}\\p{N}_])(${allowed})(?![\\p{L}\\p{N}_])`;
  const tail = `${HS}*(?:IS${HS}*)?[:\\-]?${HS}*${choice}`;
  const finalMarker = `^${HS}*FINAL${HS}+(?:JUDGMENT|ANSWER|VERDICT)`;
  const flags = "gmu";
  const finalBoxed = allMatches(
    new RegExp(`${finalMarker}[^\\n]*\\\\BOXED\\{${HS}*${choice}${HS}*\\}`, flags),
    upper,
  );
  const finalLine = allMatches(new RegExp(`${finalMarker}${tail}`, flags), upper);
  const boxed = (extractBoxed(text) ?? "").toUpperCase();
  const inBox = allMatches(new RegExp(choice, flags), boxed);
  const markerLine = allMatches(
    new RegExp(`^${HS}*(?:JUDGMENT|ANSWER|VERDICT)${tail}`, flags),
    upper,
  );
  const anywhere = allMatches(new RegExp(choice, flags), upper);
  const found = [finalBoxed, finalLine, inBox, markerLine, anywhere].find((m) => m.length > 0);
  const lastFound = found?.at(-1);
  return lastFound === undefined ? null : byUpper.get(lastFound) ?? null;
}

/**
 * {@link parseJudgeChoice}, throwing a `TaskError` when the reply commits to no choice:
 * an unreadable verdict is a judge failure, never a score against the model.
 */
export function judgeVerdict(text: string, choices: readonly string[]): string {
  const verdict = parseJudgeChoice(text, choices);
  if (verdict === null) {
    const shown = text.length > 300 ? `${text.slice(0, 300)}...` : text;
    throw new TaskError(
      `judge returned no ${choices.join("/")} verdict: ${JSON.stringify(shown)}`,
      {
        hint: "the judge model must answer with one of the verdict labels",
      },
    );
  }
  return verdict;
}
