/**
 * Every built-in env, and the test envs loaded by path, pass the env conformance suite.
 */
import "./_builtins.ts";
import { join } from "node:path";
import type { EnvPlugin } from "../kit/env_contract.ts";
import { BUILTIN_PLUGINS } from "../plugins/builtins.ts";
import { envConformance, type EnvConformanceCase } from "./conformance/env_conformance.ts";

/** What each built-in env needs beyond its defaults. */
const CASES: Record<string, Omit<EnvConformanceCase, "plugin">> = {
  "single-agent": {},
  "best-of-n": { config: { n: 2 } },
  "user-sim": { flags: ["--env.user.max-turns", "2"] },
};

for (const [id, load] of Object.entries(BUILTIN_PLUGINS.modules.env)) {
  const plugin = (await load()).default as EnvPlugin;
  if (!CASES[id]) throw new Error(`no conformance case for the built-in env '${id}'`);
  envConformance(id, { plugin, ...CASES[id] });
}

const CRITIC = join(import.meta.dirname!, "fixtures", "envs", "critic.ts");
const critic = (await import(CRITIC)).default as EnvPlugin;
envConformance("critic (by path)", { plugin: critic, envId: CRITIC });
