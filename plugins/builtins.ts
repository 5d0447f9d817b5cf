/**
 * The built-in plugins. Every import path is a literal so `deno compile` and
 * `bun build --compile` embed them in the binary.
 *
 * @module
 */
import type { BuiltinCatalog } from "../kit/mod.ts";

/** The built-in plugin modules by kind and normalized id, and the ids accepted as aliases. */
export const BUILTIN_PLUGINS: BuiltinCatalog = {
  modules: {
    taskset: {
      "addition": () => import("./tasksets/addition/mod.ts"),
      "bash-interception": () => import("./tasksets/bash-interception/mod.ts"),
      "echo": () => import("./tasksets/echo/mod.ts"),
      "jsonl": () => import("./tasksets/jsonl/mod.ts"),
      "reverse-text": () => import("./tasksets/reverse-text/mod.ts"),
      "shell-basics": () => import("./tasksets/shell-basics/mod.ts"),
    },
    harness: {
      "bash": () => import("./harnesses/bash/mod.ts"),
      "claude-code": () => import("./harnesses/claude-code/mod.ts"),
      "codex": () => import("./harnesses/codex/mod.ts"),
      "command": () => import("./harnesses/command/mod.ts"),
      "null": () => import("./harnesses/null/mod.ts"),
      "opencode": () => import("./harnesses/opencode/mod.ts"),
      "pi": () => import("./harnesses/pi/mod.ts"),
    },
    judge: {
      "match": () => import("./judges/match/mod.ts"),
      "reference": () => import("./judges/reference/mod.ts"),
      "rubric": () => import("./judges/rubric/mod.ts"),
    },
    runtime: {
      // `subprocess` is Python verifiers' id for it; `local` is accepted as an alias.
      "subprocess": () => import("./runtimes/local/mod.ts"),
      "local": () => import("./runtimes/local/mod.ts"),
      "docker": () => import("./runtimes/docker/mod.ts"),
      "prime": () => import("./runtimes/prime/mod.ts"),
      "modal": () => import("./runtimes/modal/mod.ts"),
    },
    env: {
      "best-of-n": () => import("./envs/best-of-n/mod.ts"),
      "single-agent": () => import("./envs/single-agent/mod.ts"),
      "user-sim": () => import("./envs/user-sim/mod.ts"),
    },
  },
  // `local` is accepted for `subprocess`.
  aliases: { local: "subprocess" },
};
