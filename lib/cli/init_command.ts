/**
 * `vf init <kind> <name> [--dir <dir>]`: scaffolds a plugin package (see
 * `init_templates.ts` for what it holds) in `./<name>` or `<dir>`. Refuses a directory
 * that exists and is not empty.
 *
 * @module
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import process from "node:process";
import { InputError } from "../../kit/errors.ts";
import { normalizeId } from "../plugins/specifier.ts";
import { initFiles, type InitParams } from "./init_templates.ts";
import { INIT_KINDS, type InitKind } from "./init_plugin_templates.ts";
import { err, out } from "./output.ts";
import { commandHelp } from "./usage.ts";
import { quote } from "../../kit/util/quote.ts";

const USAGE = "vf init <taskset|harness|judge|runtime> <name> [--dir <dir>]";
const NPM_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

function usage(message: string, hint = `${USAGE}, e.g. vf init taskset @acme/vf-mathsets`) {
  return new InputError("usage", message, { hint });
}

/** The template parameters of a kind and package name. Throws InputError when invalid. */
export function initParams(kind: string, name: string): InitParams {
  if (!(INIT_KINDS as readonly string[]).includes(kind)) {
    throw usage(`Cannot run \`vf init\`: unknown plugin kind ${quote(kind)}`);
  }
  if (!NPM_NAME.test(name) || name.length > 214) {
    throw usage(
      `Cannot run \`vf init\`: ${quote(name)} is not a valid package name`,
      "Lowercase letters, digits, - . _ ~, optionally scoped: @acme/vf-mathsets",
    );
  }
  const bare = name.slice(name.indexOf("/") + 1);
  const scope = name.startsWith("@") ? name.slice(1, name.indexOf("/")) : "your-scope";
  const jsrPart = (s: string) => s.toLowerCase().replace(/[^a-z0-9-]/g, "-").replace(/^-+/, "");
  return {
    kind: kind as InitKind,
    name,
    jsrName: `@${jsrPart(scope)}/${jsrPart(bare)}`,
    id: normalizeId(bare),
  };
}

/** Writes the package into `dir` (created; must be absent or empty). Returns the files. */
function scaffoldPlugin(params: InitParams, dir: string): string[] {
  if (existsSync(dir) && (!statSync(dir).isDirectory() || readdirSync(dir).length > 0)) {
    throw new InputError("init_target_exists", `Cannot run \`vf init\`: ${dir} is not empty`, {
      hint: "Pick a new directory with --dir",
    });
  }
  mkdirSync(dir, { recursive: true });
  const files = initFiles(params);
  for (const [rel, text] of Object.entries(files)) writeFileSync(join(dir, rel), text);
  return Object.keys(files);
}

/** Runs `vf init ...`; returns the exit code. */
export async function initCommand(argv: string[]): Promise<number> {
  const positional: string[] = [];
  let dirArg: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--dir" || a.startsWith("--dir=")) {
      dirArg = a === "--dir" ? argv[++i] : a.slice("--dir=".length);
      if (!dirArg) throw usage("Cannot run `vf init`: --dir needs a directory");
    } else if (a === "--help" || a === "-h") {
      await out(commandHelp(["init"])!);
      return 0;
    } else if (a.startsWith("-")) {
      throw usage(`Cannot run \`vf init\`: unknown flag ${a}`);
    } else positional.push(a);
  }
  const [kind, name, ...extra] = positional;
  if (kind === undefined || name === undefined || extra.length > 0) {
    throw usage("Cannot run `vf init`: expected <kind> and <name>");
  }
  const params = initParams(kind, name);

  const cwd = process.cwd();
  const dir = dirArg
    ? (isAbsolute(dirArg) ? dirArg : resolve(cwd, dirArg))
    : resolve(cwd, params.name.slice(params.name.indexOf("/") + 1));
  const files = scaffoldPlugin(params, dir);
  await err(
    `created ${params.kind} plugin "${params.id}" in ${dir}: ${files.join(", ")}\n` +
      `next: cd ${dir} && npm install && npm run bundle && VF_BIN=vf npm test`,
  );
  await out(dir);
  return 0;
}
