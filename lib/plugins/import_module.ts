/**
 * The one native `import()` of a specifier known only at run time: a user's plugin (a
 * file URL, an `https:` URL, an `npm:`/`jsr:` specifier or a fetched file). Every other
 * import in the package is static or a string literal, so `deno publish` rewrites them;
 * this one it cannot analyze (its `unanalyzable-dynamic-import` warning points here, and
 * only here — scripts/publish_check.sh checks that). Specifiers given to it are absolute.
 *
 * In the single-file binary, a plugin's imports of `@verifiers/verifiers-ts` and `zod`
 * resolve to the binary's own copies (see self_modules.ts).
 *
 * @module
 */
import { isCompiled } from "../../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../../kit/_runtime/runtime_name.ts";
import { provideSelfModules } from "./self_modules.ts";

/** Imports the module at an absolute specifier and returns its exports. */
export async function importModule(specifier: string): Promise<Record<string, unknown>> {
  if (runtimeName() === "bun" && isCompiled()) await provideSelfModules();
  return await import(specifier) as Record<string, unknown>;
}
