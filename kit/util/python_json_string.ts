/**
 * Strings as Python's `json.dumps` writes them (`ensure_ascii`, its default), which task
 * hashes reproduce and a provider written in Python may echo.
 *
 * @module
 */

/** A code unit `JSON.stringify` leaves as it is and Python escapes: DEL and all above ASCII. */
const BEYOND_ASCII = /[\u007f-\uffff]/;
const BEYOND_ASCII_ALL = /[\u007f-\uffff]/g;

/** `\u` and the four lower-case hex digits of a one-unit string's code unit, as JSON writes it. */
export function jsonUnicodeEscape(c: string): string {
  return "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
}

/**
 * One string, quoted, the way Python `json.dumps(ensure_ascii=True)` writes it. Below DEL,
 * `JSON.stringify` writes what Python writes (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`,
 * other control characters as lowercase `\u00xx`, lone surrogates as `\udxxx`); Python
 * also escapes DEL and every code unit above ASCII (astral characters as their surrogate
 * pairs), which the second pass does for the strings that have any.
 */
export function pythonJsonString(s: string): string {
  const json = JSON.stringify(s);
  return BEYOND_ASCII.test(json) ? json.replace(BEYOND_ASCII_ALL, jsonUnicodeEscape) : json;
}
