/**
 * Prompt templates for judges: `{field}` placeholders filled in one pass.
 *
 * @module
 */

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Fills the `{name}` placeholders of `template` whose name is a key of `fields`, in one
 * pass over the template: literal braces and unknown placeholders stay as written, and
 * substituted values are never scanned again (a value holding `{answer}` lands verbatim).
 * Values are converted with `String`.
 */
export function renderTemplate(template: string, fields: Record<string, unknown>): string {
  const names = Object.keys(fields);
  if (names.length === 0) return template;
  const re = new RegExp(`\\{(${names.map(escapeRegExp).join("|")})\\}`, "g");
  return template.replace(re, (_m, name: string) => String(fields[name]));
}

/**
 * Wraps text in a backtick fence one longer than the longest backtick run inside it
 * (at least three), so the text cannot close the fence early.
 */
export function fence(text: string): string {
  let longest = 2;
  for (const m of text.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const f = "`".repeat(longest + 1);
  return `${f}\n${text}\n${f}`;
}
