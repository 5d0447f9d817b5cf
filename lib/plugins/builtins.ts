/**
 * The built-in plugins. Every import path is a literal so `deno compile` and
 * `bun build --compile` embed them in the binary.
 *
 * @module
 */
import type { PluginKind } from "./contract.ts";

type Importer = () => Promise<Record<string, unknown>>;

/** Built-in plugin modules by kind and normalized id. */
export const BUILTINS: Record<PluginKind, Record<string, Importer>> = {
  taskset: {
    "addition": () => import("../../plugins/tasksets/addition/mod.ts"),
    "echo": () => import("../../plugins/tasksets/echo/mod.ts"),
    "jsonl": () => import("../../plugins/tasksets/jsonl/mod.ts"),
    "reverse-text": () => import("../../plugins/tasksets/reverse-text/mod.ts"),
    "shell-basics": () => import("../../plugins/tasksets/shell-basics/mod.ts"),
  },
  harness: {
    "bash": () => import("../../plugins/harnesses/bash/mod.ts"),
    "command": () => import("../../plugins/harnesses/command/mod.ts"),
    "null": () => import("../../plugins/harnesses/null/mod.ts"),
  },
  judge: {
    "match": () => import("../../plugins/judges/match/mod.ts"),
    "reference": () => import("../../plugins/judges/reference/mod.ts"),
    "rubric": () => import("../../plugins/judges/rubric/mod.ts"),
  },
  runtime: {
    // `subprocess` is Python verifiers' id for it; `local` is accepted as an alias.
    "subprocess": () => import("../../plugins/runtimes/local/mod.ts"),
    "local": () => import("../../plugins/runtimes/local/mod.ts"),
    "prime": () => import("../../plugins/runtimes/prime/mod.ts"),
    "modal": () => import("../../plugins/runtimes/modal/mod.ts"),
  },
};

/** Ids accepted for a built-in whose own id is another (`local` is `subprocess`). */
export const BUILTIN_ALIASES: Record<string, string> = { local: "subprocess" };

/** The built-in ids of a kind, sorted (aliases left out). */
export function builtinIds(kind: PluginKind): string[] {
  return Object.keys(BUILTINS[kind]).filter((id) => !(id in BUILTIN_ALIASES)).sort();
}
