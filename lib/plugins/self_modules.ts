/**
 * This vf's own modules, offered to the code it loads under Bun: a script run by `vf
 * run`, or a plugin loaded from source by the single-file binary (where no
 * `node_modules` exists), imports `@verifiers/verifiers-ts` (or its `/kit`) and `zod` and gets the
 * copies running here — one library, whatever is installed beside the script.
 *
 * @module
 */
import denoConfig from "../../deno.json" with { type: "json" };

/** The package's own name (deno.json). */
export const SELF_NAME: string = denoConfig.name;

/** The specifier a script's `node:test` imports are renamed to (see mini_test.ts). */
export const TEST_MODULE = "vf-run:node-test";

/** The kit's public module, served as `@verifiers/verifiers-ts/kit`. */
const KIT_NAME = `${denoConfig.name}/kit`;

let provided: Promise<void> | null = null;
let loadLibrary: () => Promise<Record<string, unknown>> = () => import("../../kit/mod.ts");

/**
 * Names the module served as `@verifiers/verifiers-ts` (the composition root, `mod.ts`,
 * hands itself in; until then the kit stands in for it).
 */
export function setSelfModule(load: () => Promise<Record<string, unknown>>): void {
  loadLibrary = load;
}

/** Serves `@verifiers/verifiers-ts`, its `/kit`, `zod` and the test module as virtual modules (once). */
export function provideSelfModules(): Promise<void> {
  provided ??= (async () => {
    // run_script.ts (node:child_process) is imported here, not at start: every command
    // imports this module, few serve modules
    const [{ installVirtualModules }, self, kit, zod, tests] = await Promise.all([
      import("../../kit/_runtime/run_script.ts"),
      loadLibrary(),
      import("../../kit/mod.ts"),
      import("zod"),
      import("./mini_test.ts"),
    ]);
    installVirtualModules({
      [SELF_NAME]: self,
      [KIT_NAME]: kit as unknown as Record<string, unknown>,
      zod: zod as unknown as Record<string, unknown>,
      [TEST_MODULE]: tests as unknown as Record<string, unknown>,
    });
  })();
  return provided;
}
