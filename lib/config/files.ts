/**
 * Reading config files (TOML 1.0 or JSON) into plain data, with file:line:column
 * on syntax errors.
 *
 * @module
 */
import { parse as parseToml, TomlError } from "smol-toml";
import { InputError } from "../../kit/errors.ts";
import { MAX_CONFIG_FILE_BYTES, readTextFileBounded } from "../../kit/util/read_text.ts";
import { MAX_CONFIG_DEPTH, nestingDepthExceeds } from "./merge.ts";

/** A config file read, or the problem that kept it from being read. */
export type FileRead = { ok: true; data: Record<string, unknown> } | { ok: false; problem: string };

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
export function readConfigFile(path: string): FileRead {
  let text: string;
  try {
    text = readTextFileBounded(path, { what: "config file", maxBytes: MAX_CONFIG_FILE_BYTES });
  } catch (err) {
    if (err instanceof InputError) return { ok: false, problem: err.message };
    throw err;
  }
  const parsed = parseText(path, text);
  if (parsed.ok && nestingDepthExceeds(parsed.data, MAX_CONFIG_DEPTH)) {
    return {
      ok: false,
      problem: `${path}: config is nested more than ${MAX_CONFIG_DEPTH} levels deep`,
    };
  }
  return parsed;
}

function parseText(path: string, text: string): FileRead {
  if (path.toLowerCase().endsWith(".json")) {
    try {
      const data = JSON.parse(text);
      if (typeof data !== "object" || data === null || Array.isArray(data)) {
        return { ok: false, problem: `${path}: a config file must hold a JSON object` };
      }
      return { ok: true, data };
    } catch (err) {
      if (err instanceof RangeError) {
        return { ok: false, problem: `${path}: config is nested too deeply to parse` };
      }
      const m = /position (\d+)/.exec(String((err as Error).message));
      const where = m ? lineCol(text, Number(m[1])) : null;
      const loc = where ? `${path}:${where.line}:${where.column}` : path;
      return { ok: false, problem: `${loc}: invalid JSON: ${(err as Error).message}` };
    }
  }
  try {
    return { ok: true, data: parseToml(text) as Record<string, unknown> };
  } catch (err) {
    if (err instanceof RangeError) {
      return { ok: false, problem: `${path}: config is nested too deeply to parse` };
    }
    if (err instanceof TomlError) {
      const first = (err.message.split("\n")[0] ?? "").replace(/^Invalid TOML document: /, "");
      return { ok: false, problem: `${path}:${err.line}:${err.column}: invalid TOML: ${first}` };
    }
    return { ok: false, problem: `${path}: invalid TOML: ${(err as Error).message}` };
  }
}
