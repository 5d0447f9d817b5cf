/**
 * This vf's own modules, offered to the code it loads under Bun: a script run by `vf
 * run`, or a plugin loaded from source by the single-file binary (where no
 * `node_modules` exists), imports `@verifiers/verifiers-ts` and `zod` and gets the
 * copies running here — one library, whatever is installed beside the script.
 *
 * @module
 */
import denoConfig from "../../deno.json" with { type: "json" };
import { installVirtualModules } from "../_runtime/run_script.ts";

/** The package's own name (deno.json). */
export const SELF_NAME: string = denoConfig.name;

/** The specifier a script's `node:test` imports are renamed to (see script/mini_test.ts). */
export const TEST_MODULE = "vf-run:node-test";

let provided: Promise<void> | null = null;

/** Serves `@verifiers/verifiers-ts`, `zod` and the test module as virtual modules (once). */
export function provideSelfModules(): Promise<void> {
  provided ??= (async () => {
    const [self, zod, tests] = await Promise.all([
      import("../../mod.ts"),
      import("zod"),
      import("../script/mini_test.ts"),
    ]);
    installVirtualModules({
      [SELF_NAME]: self as unknown as Record<string, unknown>,
      zod: zod as unknown as Record<string, unknown>,
      [TEST_MODULE]: tests as unknown as Record<string, unknown>,
    });
  })();
  return provided;
}
