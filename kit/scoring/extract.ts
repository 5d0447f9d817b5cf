/**
 * Answer extractors for scoring model replies: the last `\boxed{...}`, the last
 * `<tag>...</tag>`, the last non-empty line, the last number. Each returns `null` when the
 * reply holds no such thing.
 *
 * @module
 */

const BOXED = "\\boxed{";

/**
 * Content of the last `\boxed{...}` (nested braces balanced), trimmed; `null` when there is
 * none or its braces never close.
 */
export function extractBoxed(text: string): string | null {
  const start = text.lastIndexOf(BOXED);
  if (start < 0) return null;
  const from = start + BOXED.length;
  let depth = 1;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(from, i).trim();
  }
  return null;
}

/**
 * Python `extract_boxed_answer`: the content of the last `\boxed{...}`, or the whole text
 * when it has none.
 */
export function extractBoxedAnswer(text: string): string {
  return extractBoxed(text) ?? text;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Content of the last closed `<name>...</name>` element (attributes on the opening tag
 * allowed, no nesting), trimmed; `null` when there is none.
 */
export function extractTag(text: string, name: string): string | null {
  const n = escapeRegExp(name);
  const re = new RegExp(`<${n}(?:\\s[^>]*)?>([\\s\\S]*?)</${n}\\s*>`, "g");
  let last: string | null = null;
  for (const m of text.matchAll(re)) last = m[1] ?? "";
  return last === null ? null : last.trim();
}

/**
 * The last line with non-whitespace content, trimmed; `null` for blank text. Lines end at
 * `\n`, `\r\n` or `\r`. Read from the end: a long reply's earlier lines are not visited.
 */
export function lastLine(text: string): string | null {
  for (let end = text.length; end > 0;) {
    // a `\r` is looked for after the last `\n` only: a search of the whole text for a
    // separator it does not hold is what this function avoids
    const afterNewline = text.lastIndexOf("\n", end - 1) + 1;
    const tail = text.slice(afterNewline, end);
    const start = afterNewline + tail.lastIndexOf("\r") + 1;
    const line = (start === afterNewline ? tail : text.slice(start, end)).trim();
    if (line !== "") return line;
    end = start - 1; // before the break (a `\r\n`'s `\r` ends an empty line: skipped)
  }
  return null;
}

/**
 * A number token: optional `-`/`+` (not glued to a preceding word or digit), digits with
 * optional `,` thousands groups, optional decimals and exponent, or a leading-dot decimal.
 */
const NUMBER_RE =
  /(?<![\w.])[-+]?(?:(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?(?!\d)/g;

/** Parses one number token (commas dropped); `null` when it is not a finite number. */
export function parseNumber(token: string): number | null {
  const t = token.trim().replace(/,/g, "");
  if (!/^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/.test(t)) return null;
  const x = Number(t);
  return Number.isFinite(x) ? x : null;
}

/** The last number in the text (`1,234.5` → 1234.5, `-3` → -3); `null` when there is none. */
export function lastNumber(text: string): number | null {
  let last: string | null = null;
  for (const m of text.matchAll(NUMBER_RE)) last = m[0];
  return last === null ? null : parseNumber(last);
}

/**
 * The number a reply gives as its answer: after a GSM8K-style `#### ` marker when present,
 * else inside the last `\boxed{}` when present, else the last number in the text.
 */
export function answerNumber(text: string): number | null {
  const marker = text.lastIndexOf("####");
  if (marker >= 0) {
    const after = text.slice(marker + 4).match(NUMBER_RE);
    if (after) return parseNumber(after[0]);
  }
  const boxed = extractBoxed(text);
  if (boxed !== null) {
    const n = lastNumber(boxed);
    if (n !== null) return n;
  }
  return lastNumber(text);
}
