/**
 * The base of every ACP agent harness (pi, OpenCode, Claude Code, Codex): an agent is a
 * bundle of pinned npm packages (installed once per host, kit/harness/acp/install.ts) and
 * a `prepare` step that writes its per-rollout config and names the adapter program and its
 * environment. The base starts the adapter in the runtime with its stdio open, runs one ACP
 * prompt turn (kit/harness/acp/session.ts), records the session under `trace.info.acp`, and
 * removes the per-rollout folder.
 *
 * Adapters and agents run under the Bun installed with them (`js_runtime = "bun"`, the
 * default: the agents want Node 22 or later) or under the runtime's `node`.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { defineHarness, type HarnessConfig, type HarnessLaunchContext } from "../../contract.ts";
import type { HarnessPlugin } from "../../contract.ts";
import { HarnessError } from "../../errors.ts";
import type { ProgramResult, Runtime } from "../../runtime/runtime.ts";
import { promptText } from "../../tasks/task_data.ts";
import { type AgentBundle, type AgentPackage, ensureAgentInstall } from "./install.ts";
import { newAcpRecord } from "./record.ts";
import { runAcpSession } from "./session.ts";
import { toolCallRecorder } from "../tools.ts";
import type { ToolsetGateway } from "../../mcp/gateway.ts";
import { startToolsetGateway } from "../../mcp/start_gateway.ts";

/** The pinned Bun the agents run under (the runtime verifiers-ts itself is built with). */
export const BUN_PACKAGE: AgentPackage = {
  name: "bun",
  version: "1.4.5",
  integrity:
    "sha512-SWOAncfhwiqIyaZ3uyuUD/6o8aWbG8QtU6SChlz4u6U/C89gTZafLDCmbUvyNjx+ccxLLHV+lSsWqE1OBN8bBw==",
};

/** The zod types of the keys every ACP harness has (spelled out for the published API). */
export type AcpConfigShape = {
  permissions: z.ZodDefault<z.ZodEnum<{ allow: "allow"; reject: "reject" }>>;
  start_timeout: z.ZodDefault<z.ZodNumber>;
  disabled_tools: z.ZodDefault<z.ZodNullable<z.ZodArray<z.ZodString>>>;
  tool_timeout: z.ZodDefault<z.ZodNumber>;
  skills: z.ZodDefault<z.ZodArray<z.ZodString>>;
  js_runtime: z.ZodDefault<z.ZodEnum<{ bun: "bun"; node: "node" }>>;
};

/** Config keys every ACP harness has (Python's harness keys plus the ACP ones). */
export const acpConfigShape: AcpConfigShape = {
  permissions: z.enum(["allow", "reject"]).default("allow").describe(
    'How permission requests are answered: "allow", or "reject" (the rollout then ends ' +
      "with a HarnessError naming the tool call)",
  ),
  start_timeout: z.number().positive().finite().default(120).describe(
    "Seconds the adapter gets to answer initialize and session/new",
  ),
  disabled_tools: z.array(z.string()).nullable().default(null).describe(
    "Tool names the agent must not use (passed in the agent's own form)",
  ),
  tool_timeout: z.number().positive().finite().default(600).describe(
    "Seconds per MCP tool call, for agents that take MCP servers",
  ),
  skills: z.array(z.string()).default([]).describe(
    "Skill folders (each holding SKILL.md) copied to where the agent looks for skills",
  ),
  js_runtime: z.enum(["bun", "node"]).default("bun").describe(
    'What runs the adapter and agent: "bun" (installed with the agent) or the runtime\'s node',
  ),
};

/** The validated ACP keys. */
export type AcpKeys = z.output<z.ZodObject<AcpConfigShape>>;

/** What `prepare` gets. */
export interface AcpPrepareContext<C> {
  ctx: HarnessLaunchContext<C>;
  /** The host folder holding the bundle's `node_modules`. */
  installDir: string;
  /** A fresh folder for this rollout's agent state (config, HOME), removed afterwards. */
  stateDir: string;
  /** The program that runs JavaScript: Bun's binary, or `node` (found when first read). */
  readonly js: string;
  /** The system prompt text ("" when none). */
  systemPrompt: string;
  /** The path of a package's file inside the install. */
  modulePath(pkg: string, file: string): string;
}

/** What `prepare` returns: how to start the adapter. */
export interface AcpLaunch {
  argv: string[];
  env: Record<string, string>;
  /** More fields of `session/new` (the agent's `_meta`, `systemPrompt`). */
  sessionParams?: Record<string, unknown>;
  /** A session mode to set after `session/new`. */
  modeId?: string;
}

/** What an ACP harness declares. */
export interface AcpHarnessSpec<S extends z.ZodObject<z.ZodRawShape>> {
  id: string;
  description: string;
  /** The agent's own keys (the ACP keys are added). */
  config: S;
  /** The packages installed by default (`vf harnesses install` installs these). */
  bundle: AgentBundle;
  /** The packages for a config (e.g. by its `version` key). @default always `bundle` */
  bundleFor?(config: HarnessConfig & z.output<S> & AcpKeys): AgentBundle;
  /** True when `prepare` hands the config's `skills` to the agent. @default false */
  supportsSkills?: boolean;
  /** Names a model call the agent makes on its own (a session title), else null. */
  auxiliaryCall?(request: { path: string; body: unknown }): string | null;
  /** Writes the rollout's agent config (under `stateDir`) and names the adapter. */
  prepare(p: AcpPrepareContext<HarnessConfig & z.output<S> & AcpKeys>): Promise<AcpLaunch>;
}

/** Declares an ACP harness plugin. */
export function defineAcpHarness<S extends z.ZodObject<z.ZodRawShape>>(
  spec: AcpHarnessSpec<S>,
): HarnessPlugin {
  const config = spec.config.extend(acpConfigShape);
  type C = HarnessConfig & z.output<S> & AcpKeys;
  return defineHarness({
    id: spec.id,
    agentBundle: spec.bundle,
    ...(spec.auxiliaryCall ? { auxiliaryCall: spec.auxiliaryCall } : {}),
    description: spec.description,
    config,
    capabilities: {
      executesCode: true,
      needsContainer: false,
      appendsSystemPrompt: true,
      toolsets: true,
    },
    async setup(runtime, config, signal) {
      checkRuntime(spec.id, runtime);
      checkSkills(spec, config as C);
      await ensureAgentInstall(spec.bundleFor?.(config as C) ?? spec.bundle, { signal });
    },
    async launch(raw): Promise<ProgramResult> {
      const ctx = raw as unknown as HarnessLaunchContext<C>;
      checkRuntime(spec.id, ctx.runtime);
      checkSkills(spec, ctx.config);
      const bundle = spec.bundleFor?.(ctx.config) ?? spec.bundle;
      const installDir = await ensureAgentInstall(bundle, {
        signal: ctx.signal,
        log: ctx.log,
      });
      const stateDir = `/tmp/vf-acp-${randomUUID()}`;
      const record = newAcpRecord();
      if (ctx.info) ctx.info.acp = record;
      let gateway: ToolsetGateway | null = null;
      try {
        if (ctx.toolsets?.length) {
          gateway = await startToolsetGateway(ctx.toolsets, {
            timeoutS: ctx.config.tool_timeout,
            disabled: ctx.config.disabled_tools,
            onToolCall: toolCallRecorder(ctx.info),
            signal: ctx.signal,
          });
        }
        await ctx.runtime.write(`${stateDir}/.keep`, "");
        const launch = await spec.prepare({
          ctx,
          installDir,
          stateDir,
          // looked up when asked: an agent that is a native binary needs no Bun
          get js() {
            return ctx.config.js_runtime === "node" ? "node" : bunBinary(installDir);
          },
          systemPrompt: promptText(ctx.messages.filter((m) => m.role === "system")),
          modulePath: (pkg, file) => join(installDir, "node_modules", pkg, file),
        });
        ctx.log(`${spec.id} harness: starting ${JSON.stringify(launch.argv[1] ?? launch.argv[0])}`);
        const proc = await ctx.runtime.spawn!(launch.argv, { env: launch.env });
        return await runAcpSession(proc, {
          cwd: ctx.runtime.workdir,
          prompt: promptText(ctx.messages.filter((m) => m.role === "user")),
          permissions: ctx.config.permissions,
          ...(launch.sessionParams ? { sessionParams: launch.sessionParams } : {}),
          ...(launch.modeId !== undefined ? { modeId: launch.modeId } : {}),
          ...(gateway
            ? {
              mcpServers: gateway.endpoints.map((e) => ({
                type: "http" as const,
                name: e.name,
                url: e.url,
                headers: Object.entries(e.headers).map(([name, value]) => ({ name, value })),
              })),
            }
            : {}),
          startTimeoutMs: ctx.config.start_timeout * 1000,
          signal: ctx.signal,
          record,
          name: `${spec.id} (ACP adapter)`,
        });
      } finally {
        await gateway?.close();
        await removeQuietly(ctx.runtime, stateDir);
      }
    },
  }) as unknown as HarnessPlugin;
}

/** Refuses `skills` for an agent that takes none. */
function checkSkills(spec: { id: string; supportsSkills?: boolean }, config: AcpKeys): void {
  if (config.skills.length > 0 && spec.supportsSkills !== true) {
    throw new HarnessError(`harness '${spec.id}' does not take skills`, {
      hint: "Remove env.agent.harness.skills, or use a harness that takes them",
    });
  }
}

/** Refuses runtimes the harness cannot use (no live programs, or not on this host). */
function checkRuntime(id: string, runtime: Runtime): void {
  if (runtime.spawn === undefined) {
    throw new HarnessError(
      `harness '${id}' needs a runtime that keeps a program running with its stdio open, ` +
        `and runtime '${runtime.info.type}' has none`,
    );
  }
  if (!runtime.isLocal) {
    throw new HarnessError(
      `harness '${id}' runs its agent from this host's install; runtime ` +
        `'${runtime.info.type}' is not on this host`,
    );
  }
}

/** The Bun binary npm put in the install (the platform's `@oven/bun-*` package). */
export function bunBinary(installDir: string): string {
  const oven = join(installDir, "node_modules", "@oven");
  const found = existsSync(oven)
    ? readdirSync(oven).map((d) => join(oven, d, "bin", "bun")).find((p) => existsSync(p))
    : undefined;
  if (found === undefined) {
    throw new HarnessError(`Cannot find Bun in the agent install "${installDir}"`, {
      hint: 'This platform has no Bun package; set js_runtime = "node" (Node 22 or later)',
    });
  }
  return found;
}

/** Best-effort removal of a folder in the runtime. */
async function removeQuietly(runtime: Runtime, dir: string): Promise<void> {
  try {
    await runtime.run(["rm", "-rf", dir]);
  } catch {
    // the runtime is stopped already: the local runtime removed what write() made
  }
}
