/**
 * Fails when an import crosses a layer the wrong way (docs/architecture.md):
 * - `kit/` imports only `kit/`;
 * - the engine (`lib/` outside `lib/cli/`) imports neither `plugins/`, `lib/cli/`, `cli.ts`
 *   nor `mod.ts`: the composition roots hand it what it needs;
 * - a plugin (`plugins/<kind>/<id>/`) imports only `kit/mod.ts`, `mod.ts` and its own
 *   folder, so it could move to its own package unchanged but for that one specifier.
 *
 * Relative specifiers in `import`/`export ... from`, `import()` and `new URL(..., import.meta.url)`
 * are checked; bare ones (`zod`, `node:fs`) are not layers.
 *
 * Usage: deno run -A scripts/check_layers.ts   (prints each violation; exit 1 if any)
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import process from "node:process";

const ROOT = join(import.meta.dirname!, "..");
const SPECIFIER =
  /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|new URL\(\s*)(["'])(\.{1,2}\/[^"']*)\1/g;

/** Every `.ts` file under `dir` of the checkout at `root` (paths relative to `root`). */
export function tsFiles(dir: string, root = ROOT): string[] {
  const out: string[] = [];
  if (!existsSync(join(root, dir))) return out;
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...tsFiles(path, root));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

/** The root-relative targets of `file`'s relative imports, without comment lines. */
export function importsOf(file: string, root = ROOT): string[] {
  const code = readFileSync(join(root, file), "utf8")
    .split("\n").filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line)).join("\n");
  return [...code.matchAll(SPECIFIER)].map((m) => normalize(join(dirname(file), m[2]!)));
}

/** Why `file` may not import `target`, or null when it may. */
export function violation(file: string, target: string): string | null {
  const under = (dir: string, path: string) => path === dir || path.startsWith(`${dir}/`);
  if (under("kit", file)) {
    return under("kit", target) ? null : "the kit imports only kit/";
  }
  if (under("lib", file) && !under("lib/cli", file)) {
    if (under("plugins", target)) return "the engine does not import plugins/";
    if (under("lib/cli", target)) return "the engine does not import the CLI (lib/cli/)";
    if (target === "cli.ts" || target === "mod.ts") {
      return "the engine does not import a composition root";
    }
    return null;
  }
  const plugin = /^plugins\/[^/]+\/[^/]+/.exec(file)?.[0];
  if (plugin) {
    if (target === "kit/mod.ts" || target === "mod.ts" || under(plugin, target)) return null;
    return "a plugin imports only kit/mod.ts, mod.ts and its own folder";
  }
  return null;
}

/** One import that crosses a layer the wrong way. */
export interface LayerViolation {
  file: string;
  target: string;
  why: string;
}

/** Every wrong-way import in the `kit/`, `lib/` and `plugins/` of the checkout at `root`. */
export function layerViolations(root = ROOT): LayerViolation[] {
  const out: LayerViolation[] = [];
  for (const dir of ["kit", "lib", "plugins"]) {
    for (const file of tsFiles(dir, root)) {
      for (const target of importsOf(file, root)) {
        const why = violation(file, target);
        if (why) out.push({ file, target, why });
      }
    }
  }
  return out;
}

if (import.meta.main) {
  const found = layerViolations();
  for (const { file, target, why } of found) {
    console.log(`${file} imports ${relative(ROOT, join(ROOT, target))}: ${why}`);
  }
  if (found.length) {
    console.log(`${found.length} import(s) cross a layer the wrong way (docs/architecture.md)`);
    process.exitCode = 1;
  }
}
