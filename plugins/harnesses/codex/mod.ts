/**
 * The `codex` harness: Codex (`@openai/codex`, its native binary) driven over ACP by
 * `@agentclientprotocol/codex-acp` under the Bun installed with them. Codex speaks only the
 * Responses API (`wire_api = "chat"` is refused), so it reaches the interception endpoint
 * through a model provider of its own in `$CODEX_HOME/config.toml` (`wire_api =
 * "responses"`, the key read from an environment variable); the same file turns off the
 * plugin catalogue and analytics, which otherwise look up outside hosts. `CODEX_CONFIG`
 * does not reach codex-acp's app server at its start, so everything is in config.toml.
 *
 * @module
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { copySkills, defineAcpHarness, HarnessError } from "../../../kit/mod.ts";
import { BUNDLES, DEFAULT_VERSION } from "./bundle.ts";

const VERSIONS = Object.keys(BUNDLES) as [string, ...string[]];
/** The variable Codex reads the per-rollout key from. */
const KEY_VAR = "VF_CODEX_API_KEY";
/** The model provider's name in config.toml. */
const PROVIDER = "vf";

const config = z.object({
  version: z.enum(VERSIONS).default(DEFAULT_VERSION).describe(
    `Codex version (with its pinned codex-acp): ${VERSIONS.join(", ")}`,
  ),
  multi_agent: z.boolean().default(false).describe(
    "Let Codex start sub-agents (its multi_agent feature)",
  ),
});

/** A TOML basic string. */
function tomlString(s: string): string {
  return JSON.stringify(s);
}

/** The `codex` harness plugin. */
export default defineAcpHarness({
  id: "codex",
  description: "Codex over ACP (codex-acp), its model calls through the endpoint as the " +
    "OpenAI Responses API",
  config,
  bundle: BUNDLES[DEFAULT_VERSION]!,
  bundleFor: (cfg) => BUNDLES[cfg.version] ?? BUNDLES[DEFAULT_VERSION]!,
  supportsSkills: true,
  async prepare({ ctx, installDir, stateDir, js, systemPrompt, modulePath }) {
    const home = `${stateDir}/codex`;
    // skills: copied where Codex reads the user's own, `$CODEX_HOME/skills`
    await copySkills(ctx.runtime, ctx.config.skills, `${home}/skills`);
    const features: Record<string, boolean> = {
      plugins: false,
      multi_agent: ctx.config.multi_agent,
    };
    for (const tool of ctx.config.disabled_tools ?? []) features[tool] = false;
    const lines = [
      `model = ${tomlString(ctx.model)}`,
      `model_provider = ${tomlString(PROVIDER)}`,
      `approval_policy = "never"`,
      `sandbox_mode = "danger-full-access"`,
      `check_for_update_on_startup = false`,
      ...(systemPrompt !== "" ? [`developer_instructions = ${tomlString(systemPrompt)}`] : []),
      "",
      `[model_providers.${PROVIDER}]`,
      `name = ${tomlString(PROVIDER)}`,
      `base_url = ${tomlString(ctx.endpoint)}`,
      `wire_api = "responses"`,
      `env_key = ${tomlString(KEY_VAR)}`,
      "",
      "[features]",
      ...Object.entries(features).map(([k, v]) => `${k} = ${v}`),
      "",
      "[analytics]",
      "enabled = false",
      "",
    ];
    await ctx.runtime.write(`${home}/config.toml`, lines.join("\n"));
    return {
      argv: [js, modulePath("@agentclientprotocol/codex-acp", "dist/index.js")],
      env: {
        HOME: stateDir,
        CODEX_HOME: home,
        CODEX_PATH: codexBinary(installDir),
        MODEL_PROVIDER: PROVIDER,
        INITIAL_AGENT_MODE: "agent-full-access",
        NO_BROWSER: "1",
        DO_NOT_TRACK: "1",
        [KEY_VAR]: ctx.secret,
      },
    };
  },
});

/** Codex's native binary in the install (the platform package's `vendor/<triple>/bin`). */
function codexBinary(installDir: string): string {
  const scope = join(installDir, "node_modules", "@openai");
  const found = existsSync(scope)
    ? readdirSync(scope).filter((d) => d.startsWith("codex-")).flatMap((d) => {
      const vendor = join(scope, d, "vendor");
      return existsSync(vendor)
        ? readdirSync(vendor).map((t) => join(vendor, t, "bin", "codex"))
        : [];
    }).find((p) => existsSync(p))
    : undefined;
  if (found === undefined) {
    throw new HarnessError(`Cannot find Codex's binary in "${installDir}"`, {
      hint: "This platform has no @openai/codex-<platform> package",
    });
  }
  return found;
}
