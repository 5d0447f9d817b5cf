/**
 * The `opencode` harness: OpenCode (`opencode-ai`, a native binary) driven over ACP by its
 * own `opencode acp`. Its config comes whole from `OPENCODE_CONFIG_CONTENT`: one provider,
 * `@ai-sdk/openai-compatible` (built into the binary, so nothing is fetched for it), whose
 * base URL is the interception endpoint and whose key is an `{env:...}` reference, so the
 * key stays in the environment. The `OPENCODE_DISABLE_*` switches keep it from the models
 * catalogue, updates, LSP downloads and its default plugins (each a lookup of an outside
 * host, and, offline, a start that waits for them); the project's own OpenCode config is
 * not read, so a task's folder cannot point it elsewhere. HOME and the XDG folders are per
 * rollout.
 *
 * @module
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { z } from "zod";
import { copySkills, defineAcpHarness, HarnessError, type Runtime } from "../../../kit/mod.ts";
import { BUNDLES, DEFAULT_VERSION } from "./bundle.ts";

const VERSIONS = Object.keys(BUNDLES) as [string, ...string[]];
/** The variable OpenCode reads the per-rollout key from. */
const KEY_VAR = "VF_OPENCODE_API_KEY";
/** The provider's id in the config. */
const PROVIDER = "vf";

const config = z.object({
  version: z.enum(VERSIONS).default(DEFAULT_VERSION).describe(
    `OpenCode version: ${VERSIONS.join(", ")}`,
  ),
});

/** The `opencode` harness plugin. */
export default defineAcpHarness({
  id: "opencode",
  description: "OpenCode over ACP (opencode acp), its model calls through the endpoint as " +
    "chat completions",
  config,
  supportsSkills: true,
  bundle: BUNDLES[DEFAULT_VERSION]!,
  bundleFor: (cfg) => BUNDLES[cfg.version] ?? BUNDLES[DEFAULT_VERSION]!,
  auxiliaryCall: ({ body }) => isTitleCall(body) ? "session_title" : null,
  async prepare({ ctx, installDir, stateDir, systemPrompt }) {
    const configHome = `${stateDir}/config`;
    await markPluginInstalled(ctx.runtime, `${configHome}/opencode`);
    // an empty models catalogue: only the provider below exists (building every known
    // provider from the catalogue built into the binary takes seconds of each start)
    await ctx.runtime.write(`${stateDir}/models.json`, "{}");
    // skills: copied into the folder OpenCode reads its own skills from
    await copySkills(ctx.runtime, ctx.config.skills, `${configHome}/opencode/skills`);
    const instructions: string[] = [];
    if (systemPrompt !== "") {
      instructions.push(`${stateDir}/system.md`);
      await ctx.runtime.write(`${stateDir}/system.md`, systemPrompt);
    }
    const permission: Record<string, string> = {
      // "ask" makes each tool call a session/request_permission, answered by the policy
      "*": ctx.config.permissions === "reject" ? "ask" : "allow",
    };
    for (const tool of ctx.config.disabled_tools ?? []) permission[tool] = "deny";
    const content = {
      model: `${PROVIDER}/${ctx.model}`,
      small_model: `${PROVIDER}/${ctx.model}`,
      enabled_providers: [PROVIDER],
      provider: {
        [PROVIDER]: {
          npm: "@ai-sdk/openai-compatible",
          name: "verifiers-ts",
          options: { baseURL: ctx.endpoint, apiKey: `{env:${KEY_VAR}}` },
          models: { [ctx.model]: { name: ctx.model, tool_call: true } },
        },
      },
      permission,
      autoupdate: false,
      share: "disabled",
      ...(instructions.length > 0 ? { instructions } : {}),
    };
    return {
      argv: [opencodeBinary(installDir), "acp"],
      env: {
        HOME: stateDir,
        XDG_CONFIG_HOME: configHome,
        XDG_DATA_HOME: `${stateDir}/data`,
        XDG_CACHE_HOME: `${stateDir}/cache`,
        XDG_STATE_HOME: `${stateDir}/state`,
        OPENCODE_CONFIG_CONTENT: JSON.stringify(content),
        OPENCODE_MODELS_PATH: `${stateDir}/models.json`,
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
        OPENCODE_DISABLE_SHARE: "1",
        OPENCODE_DISABLE_PROJECT_CONFIG: "1",
        OPENCODE_DISABLE_CLAUDE_CODE: "1",
        OPENCODE_PURE: "1",
        NO_BROWSER: "1",
        DO_NOT_TRACK: "1",
        [KEY_VAR]: ctx.secret,
      },
    };
  },
});

/**
 * OpenCode installs its plugin package (`@opencode-ai/plugin`, by npm from the registry) into
 * every config folder it reads, in the background, unless the folder has a `node_modules` and
 * a lock naming the package: written here, so it looks nothing up (OpenCode 1.18's
 * `Npm.install`).
 */
async function markPluginInstalled(runtime: Runtime, dir: string): Promise<void> {
  await runtime.write(`${dir}/node_modules/.keep`, "");
  await runtime.write(`${dir}/package.json`, JSON.stringify({ private: true }));
  await runtime.write(
    `${dir}/package-lock.json`,
    JSON.stringify({
      lockfileVersion: 3,
      packages: { "": { dependencies: { "@opencode-ai/plugin": "*" } } },
    }),
  );
}

/**
 * OpenCode's session-title call: no tools, and a system prompt that makes the model a
 * title generator.
 */
function isTitleCall(body: unknown): boolean {
  const b = body as { tools?: unknown[]; messages?: { role?: string; content?: unknown }[] };
  const system = (b?.messages ?? []).filter((m) => m.role === "system")
    .map((m) => JSON.stringify(m.content)).join("\n");
  return (b?.tools ?? []).length === 0 && /title generator/i.test(system);
}

/**
 * OpenCode's native binary in the install: the platform's `opencode-<os>-<arch>[-baseline]`
 * package, the baseline build only on an x64 CPU without AVX2 (as opencode-ai's own
 * postinstall chooses).
 */
function opencodeBinary(installDir: string): string {
  const modules = join(installDir, "node_modules");
  const prefix = `opencode-${process.platform}-${process.arch}`;
  const found = existsSync(modules)
    ? readdirSync(modules).filter((d) => d.startsWith(prefix))
      .sort((a, b) => rank(a) - rank(b))
      .map((d) => join(modules, d, "bin", "opencode")).find((p) => existsSync(p))
    : undefined;
  if (found === undefined) {
    throw new HarnessError(`Cannot find OpenCode's binary in "${installDir}"`, {
      hint: `This platform has no ${prefix} package`,
    });
  }
  return found;
}

/** The order binary packages are tried in: the fastest build this CPU runs first. */
function rank(name: string): number {
  const baseline = name.includes("-baseline");
  return (baseline === hasAvx2() ? 1 : 0) + (name.includes("-musl") ? 2 : 0);
}

let avx2: boolean | undefined;
/** True when the CPU has AVX2 (or is not x64 on Linux, where no baseline build applies). */
function hasAvx2(): boolean {
  if (avx2 !== undefined) return avx2;
  try {
    avx2 = process.arch !== "x64" || process.platform !== "linux" ||
      /\bavx2\b/.test(readFileSync("/proc/cpuinfo", "utf8"));
  } catch {
    avx2 = true;
  }
  return avx2;
}
