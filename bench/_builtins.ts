/**
 * Benchmarks that drive the engine's modules in-process act as a composition root:
 * importing this module hands the engine the built-in plugins, as `cli.ts` and `mod.ts` do.
 *
 * @module
 */
import { installBuiltins } from "../lib/plugins/builtin_catalog.ts";
import { BUILTIN_PLUGINS } from "../plugins/builtins.ts";

installBuiltins(BUILTIN_PLUGINS);
