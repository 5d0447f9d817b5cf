/**
 * Tokenizing `vf eval` arguments into config files, dotted flags, the positional
 * taskset id and launch switches. Values are kept as strings here; they are typed
 * later against the (narrowed) config schema.
 *
 * @module
 */
import { quote } from "../../kit/util/quote.ts";

/** One `--dotted.flag value...` occurrence. */
export interface RawFlag {
  /** The flag as typed, without `=value` (e.g. `--env.agent.max-turns`, `-n`). */
  text: string;
  /** Path segments as typed (short aliases not yet expanded). */
  segments: string[];
  /** Values that followed (empty for a bare boolean). */
  values: string[];
  /** Position in argv, for ordering. */
  index: number;
}

/** A config file layer: `@ file` at the root, or `--a.b @ file` nested. */
export interface FileLayer {
  path: string;
  /** Where the file's content goes (empty = root). */
  at: string[];
  /** The flag that nested it, when nested. */
  flag?: string;
}

/** The tokenized command line. */
export interface ParsedArgv {
  positional: string[];
  files: FileLayer[];
  flags: RawFlag[];
  help: boolean;
  /**
   * `--resume <run-dir>` (sugar for `@ <run-dir>/configs/eval.json --resume`): the run
   * directory as typed. Its config file is the first file layer.
   */
  resumeDir?: string;
  /** Problems found while tokenizing. */
  problems: string[];
}

const SHORT_FLAGS = new Set(["m", "n", "r", "c", "s", "v", "o"]);

function isFlagToken(t: string): boolean {
  if (t.startsWith("--") && t.length > 2) return true;
  if (/^-[a-zA-Z]$/.test(t)) return true;
  return /^-[a-zA-Z]=/.test(t);
}

/** Tokenizes the arguments after `eval`. */
export function tokenizeArgv(argv: readonly string[]): ParsedArgv {
  const out: ParsedArgv = { positional: [], files: [], flags: [], help: false, problems: [] };
  let seenFlag = false;
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === "--help" || tok === "-h") {
      out.help = true;
      continue;
    }
    if (tok === "@" || (tok.startsWith("@") && tok.length > 1)) {
      const path = tok === "@" ? argv[++i] : tok.slice(1);
      if (path === undefined) out.problems.push("`@` must be followed by a config file path");
      else out.files.push({ path, at: [] });
      continue;
    }
    if (tok === "--") {
      out.problems.push("unexpected `--`: vf eval takes no command after `--`");
      continue;
    }
    if (isFlagToken(tok)) {
      seenFlag = true;
      const eq = tok.indexOf("=");
      const text = eq >= 0 ? tok.slice(0, eq) : tok;
      const name = text.replace(/^--?/, "");
      if (text.startsWith("-") && !text.startsWith("--") && !SHORT_FLAGS.has(name)) {
        out.problems.push(`unknown flag ${quote(text, { bare: true })}`);
        continue;
      }
      const segments = name.split(".");
      if (segments.some((s) => s === "")) {
        out.problems.push(`malformed flag ${quote(text, { bare: true })}: empty path segment`);
        continue;
      }
      const values: string[] = [];
      if (eq >= 0) values.push(tok.slice(eq + 1));
      else {
        const next = argv[i + 1];
        if (next?.startsWith("@")) {
          i++;
          const path = next === "@" ? argv[++i] : next.slice(1);
          if (path === undefined) {
            out.problems.push(`${text} @ must be followed by a config file path`);
          } else out.files.push({ path, at: segments, flag: text });
          continue;
        }
        for (
          let v = next;
          v !== undefined && !isFlagToken(v) && !v.startsWith("@");
          v = argv[i + 1]
        ) {
          values.push(v);
          i++;
        }
      }
      out.flags.push({ text, segments, values, index: i });
      continue;
    }
    if (seenFlag) {
      out.problems.push(
        `unexpected argument ${quote(tok)}: the taskset id goes first (vf eval <taskset> [flags])`,
      );
      continue;
    }
    out.positional.push(tok);
  }
  applyResumeSugar(out);
  return out;
}

const BOOLEAN_WORDS = new Set(["true", "false", "1", "0", "yes", "no"]);

/** `--resume <run-dir>` (or `--resume <run-dir>/configs/eval.json`) → a file layer + `--resume`. */
function applyResumeSugar(out: ParsedArgv): void {
  for (const flag of out.flags) {
    const [value, ...more] = flag.values;
    if (flag.text !== "--resume" || value === undefined || more.length > 0) continue;
    if (BOOLEAN_WORDS.has(value.toLowerCase()) || value === "") continue;
    const file = /\.json$/i.test(value) ? value : `${value.replace(/\/+$/, "")}/configs/eval.json`;
    out.resumeDir = /\.json$/i.test(value)
      ? value.replace(/\/?[^/]+$/, "").replace(/\/?configs$/, "") || "."
      : value;
    out.files.unshift({ path: file, at: [] });
    flag.values = [];
  }
}
