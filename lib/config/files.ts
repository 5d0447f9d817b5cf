/**
 * Reading config files (TOML 1.0 or JSON) into plain data, with file:line:column
 * on syntax errors.
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { parse as parseToml, TomlError } from "smol-toml";

/** A config file read, or the problem that kept it from being read. */
export type FileRead = { ok: true; data: Record<string, unknown> } | { ok: false; problem: string };

function lineCol(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length;
  const column = offset - before.lastIndexOf("\n");
  return { line, column };
}

/** Reads and parses one config file; `.json` is JSON, anything else TOML. */
export function readConfigFile(path: string): FileRead {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why = code === "ENOENT"
      ? "no such file"
      : code === "EISDIR"
      ? "is a directory"
      : String(code ?? err);
    return { ok: false, problem: `${path}: cannot read config file: ${why}` };
  }
  if (path.toLowerCase().endsWith(".json")) {
    try {
      const data = JSON.parse(text);
      if (typeof data !== "object" || data === null || Array.isArray(data)) {
        return { ok: false, problem: `${path}: a config file must hold a JSON object` };
      }
      return { ok: true, data };
    } catch (err) {
      const m = /position (\d+)/.exec(String((err as Error).message));
      const where = m ? lineCol(text, Number(m[1])) : null;
      const loc = where ? `${path}:${where.line}:${where.column}` : path;
      return { ok: false, problem: `${loc}: invalid JSON: ${(err as Error).message}` };
    }
  }
  try {
    return { ok: true, data: parseToml(text) as Record<string, unknown> };
  } catch (err) {
    if (err instanceof TomlError) {
      const first = err.message.split("\n")[0].replace(/^Invalid TOML document: /, "");
      return { ok: false, problem: `${path}:${err.line}:${err.column}: invalid TOML: ${first}` };
    }
    return { ok: false, problem: `${path}: invalid TOML: ${(err as Error).message}` };
  }
}
