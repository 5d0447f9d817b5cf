/**
 * Reading config files (TOML 1.0 or JSON) into plain data, with file:line:column
 * on syntax errors.
 *
 * @module
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { type ErrorCode, InputError } from "../../kit/errors.ts";
import { MAX_CONFIG_FILE_BYTES, readTextFileBounded } from "../../kit/util/read_text.ts";
import { MAX_CONFIG_DEPTH, nestingDepthExceeds } from "./merge.ts";
import { quote } from "../../kit/util/quote.ts";

/** A config file read, or the problem that kept it from being read and what to do about it. */
export type FileRead =
  | { ok: true; data: Record<string, unknown> }
  | { ok: false; problem: string; hint: string };

/** The hint for a syntax error: the location is in the problem. */
const SYNTAX_HINT = "fix the config file at the line:column given";
const NESTED_HINT = `nest the config at most ${MAX_CONFIG_DEPTH} levels deep`;

/** What to do about a config file that could not be read, by the error's code. */
function unreadHint(code: ErrorCode): string {
  switch (code) {
    case "file_too_large":
      return `give a config file of at most ${MAX_CONFIG_FILE_BYTES / (1024 * 1024)} MiB`;
    case "file_not_utf8":
      return "save the config file as UTF-8";
    default:
      return "check the path after `@`: it must name a readable TOML or JSON file";
  }
}

function lineCol(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return { line, column };
}

/**
 * Reads and parses one config file; `.json` is JSON, anything else TOML. The file must be
 * UTF-8, at most {@link MAX_CONFIG_FILE_BYTES}, and nested at most {@link MAX_CONFIG_DEPTH}
 * levels deep.
 */
export function readConfigFile(file: string, shownAs: string = file): FileRead {
  const path = quote(shownAs, { bare: true });
  let text: string;
  try {
    text = readTextFileBounded(file, {
      shownAs,
      what: "config file",
      maxBytes: MAX_CONFIG_FILE_BYTES,
    });
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const why = (err.cause as { code?: string } | undefined)?.code;
    const hint = why === "EISDIR"
      ? "give a config file after `@`, not a directory"
      : why === "EACCES" || why === "EPERM"
      ? "make the config file readable, or give another one"
      : unreadHint(err.code);
    return { ok: false, problem: err.message, hint };
  }
  const parsed = parseText(file, path, text);
  if (parsed.ok && nestingDepthExceeds(parsed.data, MAX_CONFIG_DEPTH)) {
    return {
      ok: false,
      problem: `${path}: config is nested more than ${MAX_CONFIG_DEPTH} levels deep`,
      hint: NESTED_HINT,
    };
  }
  return parsed;
}

/** Parses `text` of `file`; `path` is the file as messages show it. */
function parseText(file: string, path: string, text: string): FileRead {
  if (file.toLowerCase().endsWith(".json")) {
    try {
      const data = JSON.parse(text);
      if (typeof data !== "object" || data === null || Array.isArray(data)) {
        return {
          ok: false,
          problem: `${path}: a config file must hold a JSON object`,
          hint: "write the JSON config as one object: { ... }",
        };
      }
      return { ok: true, data };
    } catch (err) {
      if (err instanceof RangeError) {
        return {
          ok: false,
          problem: `${path}: config is nested too deeply to parse`,
          hint: NESTED_HINT,
        };
      }
      const m = /position (\d+)/.exec(String((err as Error).message));
      const where = m ? lineCol(text, Number(m[1])) : null;
      const loc = where ? `${path}:${where.line}:${where.column}` : path;
      return {
        ok: false,
        problem: `${loc}: invalid JSON: ${(err as Error).message}`,
        hint: where ? SYNTAX_HINT : "fix the JSON syntax of the config file",
      };
    }
  }
  try {
    return { ok: true, data: parseToml(text) as Record<string, unknown> };
  } catch (err) {
    if (err instanceof RangeError) {
      return {
        ok: false,
        problem: `${path}: config is nested too deeply to parse`,
        hint: NESTED_HINT,
      };
    }
    if (err instanceof TomlError) {
      const first = (err.message.split("\n")[0] ?? "").replace(/^Invalid TOML document: /, "");
      return {
        ok: false,
        problem: `${path}:${err.line}:${err.column}: invalid TOML: ${first}`,
        hint: SYNTAX_HINT,
      };
    }
    return {
      ok: false,
      problem: `${path}: invalid TOML: ${(err as Error).message}`,
      hint: "fix the TOML syntax of the config file",
    };
  }
}
