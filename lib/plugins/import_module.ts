/**
 * The one native `import()` of a specifier known only at run time: a user's plugin (a
 * file URL, an `https:` URL, an `npm:`/`jsr:` specifier or a fetched file). Every other
 * import in the package is static or a string literal, so `deno publish` rewrites them;
 * this one it cannot analyze (its `unanalyzable-dynamic-import` warning points here, and
 * only here — `tests/publish_test.ts` checks that). Specifiers given to it are absolute.
 *
 * @module
 */

/** Imports the module at an absolute specifier and returns its exports. */
export async function importModule(specifier: string): Promise<Record<string, unknown>> {
  return await import(specifier) as Record<string, unknown>;
}
