/**
 * The built-in plugins the loader resolves bare ids against. The engine does not import
 * `plugins/`: the composition roots (`cli.ts`, `mod.ts`) hand it the catalog
 * `plugins/builtins.ts` exports, through {@link installBuiltins}, before any config loads.
 *
 * @module
 */
import type { BuiltinCatalog, PluginKind } from "../../kit/contract.ts";

const EMPTY: BuiltinCatalog = {
  modules: { taskset: {}, harness: {}, judge: {}, runtime: {}, env: {} },
  aliases: {},
};

let installed: BuiltinCatalog = EMPTY;

/** Makes `catalog` the built-ins every later load resolves against (the last call wins). */
export function installBuiltins(catalog: BuiltinCatalog): void {
  installed = catalog;
}

/** The installed catalog (empty until a composition root installs one). */
export function builtinCatalog(): BuiltinCatalog {
  return installed;
}

/** The built-in ids of a kind, sorted (aliases left out). */
export function builtinIds(kind: PluginKind): string[] {
  const { modules, aliases } = installed;
  return Object.keys(modules[kind]).filter((id) => !(id in aliases)).sort();
}
