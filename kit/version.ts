/** The verifiers-ts version (kept equal to deno.json and package.json by a test). */
export const VERSION = "0.1.0";
