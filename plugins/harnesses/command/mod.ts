/**
 * The `command` harness: runs an agent program already present in the runtime (any CLI or
 * script speaking OpenAI chat completions or Anthropic Messages). The program finds the
 * interception endpoint, its key and the model name in environment variables (names
 * configurable), the prompt text in `prompt_var`, the system prompt in
 * `system_prompt_var`, and the whole initial conversation (OpenAI chat shape, JSON) in the
 * file named by `VF_MESSAGES_FILE`. The endpoint serves chat completions
 * (`POST /v1/chat/completions`), `GET /v1/models` (the run's model), the OpenAI Responses
 * API (`POST /v1/responses`) and Anthropic Messages (`POST /v1/messages`,
 * `.../count_tokens`): Anthropic SDKs find the endpoint's root in `ANTHROPIC_BASE_URL` and
 * the key in `ANTHROPIC_API_KEY`. The tail of the program's stdout and
 * stderr is kept on the trace (`info.agent_output`) whatever its exit code. When the task
 * has MCP toolsets, `VF_MCP_CONFIG` holds `{"mcpServers": {<name>: {url, headers,
 * timeout}}}` (as Python's `--mcp-config`): streamable HTTP endpoints on this host whose
 * calls are recorded on the trace.
 *
 * The messages file lives outside the program's working directory (a program that lists
 * or commits its directory must not see it). On a runtime on this machine it goes in a
 * folder next to the rollout's work directory (in `TMPDIR`, or the local runtime's
 * `workdir_root`), named after this process as the work directories are
 * (`vf-command-p<pid>-XXXXXX`): removed when the rollout ends, and, when the run was
 * killed first, by the next run, `vf eval --resume` or `vf sandboxes gc`. In a remote
 * sandbox it goes in the sandbox's `/tmp`, which goes with the sandbox.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { dirname, join } from "node:path";
import { z } from "zod";
import {
  defineHarness,
  HarnessError,
  hostToolKeys,
  openRelay,
  ownedWorkdirPrefix,
  promptText,
  randomChars,
  type Runtime,
  SandboxError,
  type SandboxRelay,
  startToolsetGateway,
  toChatMessages,
  toolCallRecorder,
  type ToolsetGateway,
} from "../../../kit/mod.ts";

/** Variable naming the file that holds the initial messages as JSON. */
const MESSAGES_FILE_VAR = "VF_MESSAGES_FILE";
/** Variable holding the toolsets' MCP endpoints (JSON), when the task has toolsets. */
const MCP_CONFIG_VAR = "VF_MCP_CONFIG";

const varName = z.string().regex(
  /^[A-Za-z_][A-Za-z0-9_]*$/,
  "must be an environment variable name",
);

const config = z.object({
  command: z.array(z.string()).min(1).describe(
    'Program to run, as an argv list (no shell), e.g. ["my-agent", "--yes"]; ' +
      'use ["bash", "-lc", "..."] for a shell line.',
  ),
  base_url_var: varName.default("OPENAI_BASE_URL").describe(
    "Variable that receives the endpoint base URL (ends in /v1).",
  ),
  api_key_var: varName.default("OPENAI_API_KEY").describe(
    "Variable that receives the per-rollout API key.",
  ),
  model_var: varName.default("OPENAI_MODEL").describe("Variable that receives the model name."),
  anthropic_base_url_var: varName.default("ANTHROPIC_BASE_URL").describe(
    "Variable that receives the endpoint's root for Anthropic SDKs (no /v1).",
  ),
  anthropic_api_key_var: varName.default("ANTHROPIC_API_KEY").describe(
    "Variable that receives the per-rollout API key for Anthropic SDKs.",
  ),
  prompt_var: varName.default("VF_PROMPT").describe(
    "Variable that receives the prompt text (the user messages, blank-line separated).",
  ),
  system_prompt_var: varName.default("VF_SYSTEM_PROMPT").describe(
    "Variable that receives the system prompt text (empty when there is none).",
  ),
  env: z.record(z.string(), z.string()).default({}).describe(
    "Extra environment variables for the program (the variables above win).",
  ),
  ...hostToolKeys,
});

/** The `command` harness plugin. */
export default defineHarness({
  id: "command",
  description: "Runs an agent program already installed in the runtime (its endpoint " +
    "serves OpenAI chat completions and Responses, and Anthropic Messages; the tail of " +
    "its output is kept in trace info.agent_output).",
  config,
  capabilities: {
    executesCode: true,
    needsContainer: false,
    appendsSystemPrompt: true,
    toolsets: true,
  },
  async launch(ctx) {
    const cfg = ctx.config;
    const toolsets = ctx.toolsets ?? [];
    if (toolsets.length > 0 && !ctx.runtime.isLocal && ctx.runtime.hostLoopback !== true) {
      throw new HarnessError(
        `the command harness reaches MCP toolsets only from a runtime on this host, ` +
          `not '${ctx.runtime.info.type}'`,
      );
    }
    const messagesFile = messagesPath(ctx.runtime);
    // a sandbox has no route to this host's loopback: its programs go through a relay
    // (an endpoint that is not loopback is a tunnel's URL: reached directly), which starts
    // while the messages file is written
    const direct = ctx.runtime.isLocal || ctx.runtime.hostLoopback === true ||
      !LOOPBACK.has(new URL(ctx.endpoint).hostname);
    const opening = direct || ctx.runtime.spawn === undefined
      ? Promise.resolve(null)
      : openRelay(ctx.runtime, ctx.endpoint);
    const written = ctx.runtime.write(messagesFile, JSON.stringify(toChatMessages(ctx.messages)));
    const [started, write] = await Promise.allSettled([opening, written]);
    const relay = started.status === "fulfilled" ? started.value : null;
    if (started.status === "rejected" || write.status === "rejected") {
      await relay?.close();
      await removeQuietly(ctx.runtime, messagesFile);
      throw started.status === "rejected"
        ? started.reason
        : (write as PromiseRejectedResult).reason;
    }
    const endpoint = relay?.endpoint ?? ctx.endpoint;
    const env: Record<string, string> = {
      ...cfg.env,
      [cfg.anthropic_base_url_var]: endpoint.replace(/\/v1\/?$/, ""),
      [cfg.anthropic_api_key_var]: ctx.secret,
      [cfg.base_url_var]: endpoint,
      [cfg.api_key_var]: ctx.secret,
      [cfg.model_var]: ctx.model,
      [cfg.prompt_var]: promptText(ctx.messages.filter((m) => m.role === "user")),
      [cfg.system_prompt_var]: promptText(ctx.messages.filter((m) => m.role === "system")),
      [MESSAGES_FILE_VAR]: messagesFile,
    };
    let gateway: ToolsetGateway | null = null;
    try {
      if (toolsets.length > 0) {
        gateway = await startToolsetGateway(toolsets, {
          timeoutS: cfg.tool_timeout,
          disabled: cfg.disabled_tools,
          onToolCall: toolCallRecorder(ctx.info),
          signal: ctx.signal,
        });
        env[MCP_CONFIG_VAR] = gateway.mcpConfig();
      }
      ctx.log(`command harness: running ${JSON.stringify(cfg.command)}`);
      if (relay === null) return await ctx.runtime.run(cfg.command, { env, signal: ctx.signal });
      return await runBehindRelay(ctx.runtime, cfg.command, env, ctx.signal, relay);
    } finally {
      await gateway?.close();
      await relay?.close();
      await removeQuietly(ctx.runtime, messagesFile);
    }
  },
});

/**
 * Runs the program while its relay lives: a relay that ends first (killed, its session
 * dropped, its sandbox gone) ends the program and fails the rollout.
 */
async function runBehindRelay(
  runtime: Runtime,
  argv: string[],
  env: Record<string, string>,
  signal: AbortSignal,
  relay: SandboxRelay,
) {
  const controller = new AbortController();
  const forward = () => controller.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener("abort", forward, { once: true });
  let lost: string | null = null;
  void relay.ended.then((exit) => {
    lost ??= `exit code ${exit.exitCode}`;
    controller.abort(new Error("the model relay ended"));
  });
  const running = runtime.run(argv, { env, signal: controller.signal });
  try {
    const result = await running;
    if (lost !== null && !signal.aborted && result.exitCode !== 0) {
      throw new SandboxError(`The model relay in the sandbox ended mid-run (${lost})`, {
        hint: "The sandbox or its command session went away; the program lost the model",
      });
    }
    return result;
  } finally {
    signal.removeEventListener("abort", forward);
  }
}

/** Host names of this machine's loopback, as an endpoint names them. */
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** Letters of a folder's random suffix (as `mkdtemp` uses). */
const SUFFIX_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** Where one rollout's messages file goes (see the module doc). */
function messagesPath(runtime: Runtime): string {
  if (!runtime.isLocal) return `/tmp/vf-command-${randomUUID()}/messages.json`;
  const folder = ownedWorkdirPrefix("command") + randomChars(6, SUFFIX_LETTERS);
  return join(dirname(runtime.workdir), folder, "messages.json");
}

/** Best-effort removal of the messages file and its folder; never throws. */
async function removeQuietly(
  runtime: { run(argv: string[]): Promise<unknown> },
  file: string,
): Promise<void> {
  try {
    await runtime.run(["rm", "-rf", file.slice(0, file.lastIndexOf("/"))]);
  } catch {
    // the runtime may be stopped already: the local runtime then removed what write() made,
    // and a sandbox's files go with it
  }
}
