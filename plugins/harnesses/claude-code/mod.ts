/**
 * The `claude-code` harness: Claude Code (`@anthropic-ai/claude-code`, its native binary)
 * driven over ACP by `@agentclientprotocol/claude-agent-acp` under the Bun installed with
 * them. It speaks Anthropic Messages to the interception endpoint: `ANTHROPIC_BASE_URL` is
 * the endpoint's root (Claude Code adds `/v1/messages`) and `ANTHROPIC_API_KEY` the
 * rollout's key (sent as `x-api-key`). `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` keeps it
 * from the vendor's hosts (without it: a `HEAD /api/hello` and lookups of the API host),
 * `DISABLE_AUTOUPDATER=1` from updating, `CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION=false` from
 * a racy post-turn model call, and `IS_SANDBOX=1` lets it skip permissions as root. Each
 * rollout has its own config folder (`CLAUDE_CONFIG_DIR`), where the config's skills are
 * copied.
 *
 * @module
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { copySkills, defineAcpHarness, HarnessError } from "../../../kit/mod.ts";
import { BUNDLES, DEFAULT_VERSION } from "./bundle.ts";

const VERSIONS = Object.keys(BUNDLES) as [string, ...string[]];

const config = z.object({
  version: z.enum(VERSIONS).default(DEFAULT_VERSION).describe(
    `Claude Code version (with its pinned claude-agent-acp): ${VERSIONS.join(", ")}`,
  ),
});

/** The `claude-code` harness plugin. */
export default defineAcpHarness({
  id: "claude-code",
  description: "Claude Code over ACP (claude-agent-acp), its model calls through the endpoint " +
    "as Anthropic Messages",
  config,
  bundle: BUNDLES[DEFAULT_VERSION]!,
  bundleFor: (cfg) => BUNDLES[cfg.version] ?? BUNDLES[DEFAULT_VERSION]!,
  supportsSkills: true,
  auxiliaryCall: ({ body }) => isTitleCall(body) ? "session_title" : null,
  async prepare({ ctx, installDir, stateDir, js, systemPrompt, modulePath }) {
    // skills: copied where Claude Code reads the user's own, `$CLAUDE_CONFIG_DIR/skills`
    await copySkills(ctx.runtime, ctx.config.skills, `${stateDir}/claude/skills`);
    const disallowed = ctx.config.disabled_tools ?? [];
    const options: Record<string, unknown> = {};
    if (disallowed.length > 0) options.disallowedTools = disallowed;
    const toolsets = ctx.toolsets ?? [];
    if (toolsets.length > 0) {
      // only the task's servers (as Python's harness), and their tools run without the
      // auto-mode safety check, which cannot run offline (it refuses every MCP call)
      options.strictMcpConfig = true;
      options.allowedTools = toolsets.map((t) => `mcp__${t.name}`);
    }
    const claudeCode: Record<string, unknown> = {};
    if (Object.keys(options).length > 0) claudeCode.options = options;
    return {
      argv: [js, modulePath("@agentclientprotocol/claude-agent-acp", "dist/index.js")],
      env: {
        HOME: stateDir,
        CLAUDE_CONFIG_DIR: `${stateDir}/claude`,
        CLAUDE_CODE_EXECUTABLE: claudeBinary(installDir),
        ANTHROPIC_BASE_URL: ctx.endpoint.replace(/\/v1\/?$/, ""),
        ANTHROPIC_API_KEY: ctx.secret,
        ANTHROPIC_MODEL: ctx.model,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_ERROR_REPORTING: "1",
        CLAUDE_CODE_ENABLE_PROMPT_SUGGESTION: "false",
        IS_SANDBOX: "1",
        NO_BROWSER: "1",
        DO_NOT_TRACK: "1",
      },
      sessionParams: {
        ...(systemPrompt !== ""
          ? { systemPrompt: { mode: "append", content: [{ type: "text", text: systemPrompt }] } }
          : {}),
        ...(Object.keys(claudeCode).length > 0 ? { _meta: { claudeCode } } : {}),
      },
      // the default mode asks no permission: "reject" needs the mode that asks
      ...(ctx.config.permissions === "reject" ? { modeId: "default" } : {}),
    };
  },
});

/**
 * Claude Code's session-title call: no tools, and an answer shaped by a JSON schema
 * (`output_config.format`) whose one property is `title`.
 */
function isTitleCall(body: unknown): boolean {
  const b = body as {
    tools?: unknown[];
    output_config?: { format?: { type?: string; schema?: { properties?: object } } };
  };
  const format = b?.output_config?.format;
  return (b?.tools ?? []).length === 0 && format?.type === "json_schema" &&
    Object.keys(format.schema?.properties ?? {}).join() === "title";
}

/** Claude Code's native binary in the install (the platform's package holds it). */
function claudeBinary(installDir: string): string {
  const scope = join(installDir, "node_modules", "@anthropic-ai");
  const found = existsSync(scope)
    ? readdirSync(scope).filter((d) => d.startsWith("claude-code-"))
      .map((d) => join(scope, d, "claude")).find((p) => existsSync(p))
    : undefined;
  if (found === undefined) {
    throw new HarnessError(`Cannot find Claude Code's binary in "${installDir}"`, {
      hint: "This platform has no @anthropic-ai/claude-code-<platform> package",
    });
  }
  return found;
}
