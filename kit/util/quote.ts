/**
 * User values as messages show them. A message echoes what the user gave (a path, an id, a
 * flag value) so they can find it, but the value may be megabytes long or hold control
 * characters that would corrupt a terminal or a log line: {@link quote} puts it in double
 * quotes with every control or invisible character escaped, and cuts it after a bounded
 * number of characters, giving the full length.
 *
 * @module
 */

/** Longest stretch of a user value a message shows, in characters. */
export const QUOTE_MAX_CHARS = 256;

/** Escapes for the characters JSON writes short (`\n`), besides `\\` and `\"`. */
const SHORT: Record<string, string> = {
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  '"': '\\"',
  "\\": "\\\\",
};

/**
 * Control characters (C0, DEL, C1), line and paragraph separators, bidirectional and
 * zero-width format characters, the byte-order mark, and lone surrogates: what must not
 * reach a terminal raw.
 */
const UNSAFE =
  // deno-lint-ignore no-control-regex
  /[\x00-\x1f"\\\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The same, less the quote and the backslash: for a value shown bare. */
const UNSAFE_BARE = new RegExp(UNSAFE.source.replace('"\\\\', ""), "g");

function escapeChar(c: string): string {
  return SHORT[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** Options of {@link quote}. */
export interface QuoteOptions {
  /** Characters of the value shown at most. @default QUOTE_MAX_CHARS */
  maxChars?: number;
  /**
   * No enclosing quotes, `"` and `\` left as they are: for a path that leads a message as
   * its location (`path:3:1: ...`). Control characters are escaped all the same.
   * @default false
   */
  bare?: boolean;
}

/**
 * `value` in double quotes for a message: quotes, backslashes and control or invisible
 * characters escaped (`\"`, `\\`, `\n`, `\u0000`), and at most `maxChars` characters of it
 * shown; a longer value is cut (never inside a surrogate pair) and its length follows:
 * `"aaaa…" (5242880 characters)`.
 */
export function quote(value: string, options: QuoteOptions = {}): string {
  const maxChars = options.maxChars ?? QUOTE_MAX_CHARS;
  let shown = value;
  let cut = false;
  if (value.length > maxChars) {
    let end = maxChars;
    const last = value.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end--;
    shown = value.slice(0, end);
    cut = true;
  }
  const body = shown.replace(options.bare ? UNSAFE_BARE : UNSAFE, escapeChar);
  const q = options.bare ? "" : '"';
  return cut ? `${q}${body}…${q} (${value.length} characters)` : `${q}${body}${q}`;
}
