/** The JavaScript runtime verifiers-ts is running on. */
export type RuntimeName = "deno" | "bun" | "node";

/** Detects the host runtime once, by feature. */
export function runtimeName(): RuntimeName {
  const g = globalThis as Record<string, unknown>;
  if ("Deno" in g) return "deno";
  if ("Bun" in g) return "bun";
  return "node";
}
