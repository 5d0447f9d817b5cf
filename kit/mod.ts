/**
 * The plugin kit: everything a taskset, harness, judge or runtime plugin may use, and
 * nothing else. The built-in plugins under `plugins/` import only this module (and
 * `mod.ts`), so each could move to its own package with its one import renamed to
 * `@verifiers/verifiers-ts/kit`. See docs/architecture.md for the layers.
 *
 * ```ts
 * import { defineTaskset } from "@verifiers/verifiers-ts/kit";
 * import { z } from "zod";
 *
 * export default defineTaskset({
 *   id: "greetings",
 *   description: "Say hello back",
 *   config: z.object({}),
 *   load: () => [{ prompt: "Say hello", answer: "hello" }],
 * });
 * ```
 *
 * @module
 */
export {
  defineHarness,
  defineJudge,
  defineRuntime,
  defineTaskset,
  isPlugin,
  PLUGIN_ABI,
  PLUGIN_KINDS,
} from "./contract.ts";
export type {
  AnyStopHook,
  BuiltinCatalog,
  ConfigSchema,
  HarnessCapabilities,
  HarnessConfig,
  HarnessLaunchContext,
  HarnessPlugin,
  HookContext,
  JudgeCompleteOptions,
  JudgeCompletion,
  JudgeConfig,
  JudgeContext,
  JudgePlugin,
  JudgeResult,
  JudgeScore,
  MetricHook,
  OwnConfig,
  Plugin,
  PluginKind,
  RewardHook,
  RuntimeConfig,
  RuntimeCreateOptions,
  RuntimePlugin,
  RuntimeSettings,
  RuntimeSpec,
  ScoreValue,
  Solution,
  StopHook,
  TaskHooks,
  TasksetConfig,
  TasksetPlugin,
} from "./contract.ts";
export { TOOL_HOOK_PATH } from "./intercept.ts";
export type {
  InterceptedRequest,
  InterceptedResponse,
  InterceptHook,
  Replacement,
  RequestIntercept,
  RequestStopHook,
  ResponseIntercept,
  ResponseStopHook,
  ToolHookVerdict,
} from "./intercept.ts";
export { DEFAULT_ROLES, defineEnv, envClassName, envRoles, recordMetric } from "./env_contract.ts";
export type {
  EnvAgent,
  EnvAgents,
  EnvConfig,
  EnvFields,
  EnvFinalizeContext,
  EnvInteraction,
  EnvPlugin,
  EnvRole,
  EnvRunContext,
  EnvRunOptions,
  EnvSegment,
} from "./env_contract.ts";
export { parsePluginConfig } from "./parse_config.ts";
export {
  ConfigError,
  errorMessage,
  errorReport,
  HarnessError,
  InputError,
  MissingCredentialsError,
  PluginError,
  ProviderError,
  renderConfigIssue,
  SandboxError,
  TaskError,
  ToolsetError,
  VerifiersError,
} from "./errors.ts";
export type { ConfigIssue, ErrorCode, ErrorReport } from "./errors.ts";
export { VERSION } from "./version.ts";
export { addSecret } from "./secrets.ts";
export { promptText } from "./tasks/task_data.ts";
export type { TaskData, TaskResources, TaskTimeout } from "./tasks/task_data.ts";
export { seededRandom } from "./taskset_view.ts";
export type {
  Episode,
  Message,
  MessageNode,
  ModelCall,
  ToolCall,
  ToolSpec,
  Trace,
  Usage,
} from "./trace/types.ts";
export { lastMessages, lastReply, numTurns, traceReward } from "./trace/derived.ts";
export { TIMEOUT_EXIT_CODE } from "./runtime/runtime.ts";
export type {
  ProcessExit,
  ProgramResult,
  ReadOptions,
  RunOptions,
  Runtime,
  RuntimeInfo,
  RuntimeProcess,
  SpawnOptions,
} from "./runtime/runtime.ts";
export { recordPending, recordSandbox, removePending, removeSandbox } from "./runtime/ledger.ts";
export type { LedgerEntry } from "./runtime/ledger.ts";
export { acquireCreateSlot } from "./runtime/create_limiter.ts";
export {
  coresToMilliCpu,
  gbToMib,
  idleSecondsToMinutes,
  remoteImageSchema,
  remoteTimeoutSchema,
  remoteWorkdirSchema,
  secondsToMinutesCeil,
  truncSeconds,
} from "./runtime/remote_config.ts";
export { ownedWorkdirPrefix } from "./runtime/workdirs.ts";
export { allowedHostEnv, isAllowedHostVariable } from "./runtime/agent_env.ts";
export { runChatLoop } from "./harness/chat_loop.ts";
/** ACP agent harnesses: the base, the session driver, the shared agent installs. */
export {
  type AcpConfigShape,
  acpConfigShape,
  BUN_PACKAGE,
  bunBinary,
  defineAcpHarness,
} from "./harness/acp/harness.ts";
export type {
  AcpHarnessSpec,
  AcpKeys,
  AcpLaunch,
  AcpPrepareContext,
} from "./harness/acp/harness.ts";
export { runAcpSession } from "./harness/acp/session.ts";
export type { AcpSessionOptions, PermissionPolicy } from "./harness/acp/session.ts";
export { AcpCollector, newAcpRecord } from "./harness/acp/record.ts";
export { copySkills } from "./harness/acp/skills.ts";
export type { AcpPermission, AcpRecord, AcpToolCall } from "./harness/acp/record.ts";
export {
  agentsCacheDir,
  ensureAgentInstall,
  installName,
  isInstalled,
  pruneAgentInstalls,
} from "./harness/acp/install.ts";
export type {
  AgentBundle,
  AgentPackage,
  InstallOptions,
  PruneResult,
} from "./harness/acp/install.ts";
/** The OpenAI chat completions wire format: shapes, error bodies, trace messages → chat. */
export {
  CHAT_COMPLETIONS_PATH,
  errorMessageOf,
  openAIErrorBody,
  toChatMessages,
} from "./wire/chat.ts";
export type { ChatErrorBody, ChatMessage, ChatRequestBody, ChatToolCall } from "./wire/chat.ts";
/** What a model API dialect provides the interception server (see docs/architecture.md). */
export { findRoute } from "./wire/dialect.ts";
export type {
  Dialect,
  DialectAnswer,
  DialectOutcome,
  DialectRequest,
  DialectRoute,
  DialectStreamReader,
  PrepareOptions,
  RenderMeta,
  StreamVerdict,
  UpstreamCall,
} from "./wire/dialect.ts";
/** Server-sent events: an incremental splitter and the event writers. */
export { formatSseEvent, sseData, SseSplitter } from "./wire/sse.ts";
export type { SseEvent } from "./wire/sse.ts";
/** HTTP bodies and JSON replies over a socket or in-process. */
export { closeServer, fromNode, listenLoopback, readNodeBody, sendJson } from "./wire/http.ts";
export type { WireHandler, WireReply, WireRequest } from "./wire/http.ts";
/** `fetch` that reaches the run's own servers in-process (a host-side harness uses it). */
export { serveInProcess, wireFetch, wireFetchText, type WireTextReply } from "./wire/in_process.ts";
export type { WireFetchInit } from "./wire/in_process.ts";
export {
  bashSystemPrompt,
  createBashTool,
  createEditTool,
  toolCallRecorder,
  ToolError,
  withoutDisabled,
} from "./harness/tools.ts";
export type { ChatToolSpec, HostTool, ToolCallRecord } from "./harness/tools.ts";
export { hostToolKeys } from "./harness/tool_keys.ts";
export type { HostToolKeysShape } from "./harness/tool_keys.ts";
/**
 * MCP toolsets: the definition side and the host-side tools (the SDK-backed serving and
 * connecting live in `./kit/mcp`, loaded only by what uses them).
 */
export { defineToolset, isToolsetDefinition, STATE_URI, tool } from "./mcp/toolset.ts";
export type { ToolRunContext, ToolsetDefinition, ToolsetTool } from "./mcp/toolset.ts";
export { checkSources, sourceName, sourcePrefix } from "./mcp/source.ts";
export type {
  CommandToolsetSource,
  InlineToolsetSource,
  ToolsetSource,
  UrlToolsetSource,
} from "./mcp/source.ts";
export type { McpToolInfo, ToolOutcome, ToolsetConnection } from "./mcp/connection.ts";
export { toolsetHostTools } from "./mcp/host_tools.ts";
export { startToolsetGateway } from "./mcp/start_gateway.ts";
export type { GatewayEndpoint, GatewayOptions, ToolsetGateway } from "./mcp/gateway.ts";
export { lastNumber } from "./scoring/extract.ts";
export { judgeVerdict, parseJudgeChoice } from "./scoring/judge_choice.ts";
export { EXTRACTOR_RE, matchAnswer, normalizeText } from "./scoring/match.ts";
export { sequenceRatio } from "./scoring/sequence_matcher.ts";
export { fence, renderTemplate } from "./scoring/template.ts";
export { JUDGE_VIEWS, judgeAnswer, judgeQuestion, judgeResponse } from "./scoring/transcript.ts";
export { getAllEnv, getEnv } from "./_runtime/env.ts";
export { spawnProgram } from "./_runtime/spawn.ts";
export { spawnLive } from "./_runtime/spawn_live.ts";
export { openRelay, type SandboxRelay } from "./relay/host.ts";
export { concatBytes } from "./util/bytes.ts";
export { MAX_TASKSET_FILE_BYTES, readTextFileBounded } from "./util/read_text.ts";
export { quote, QUOTE_MAX_CHARS, type QuoteOptions } from "./util/quote.ts";
export { anySignal } from "./util/any_signal.ts";
export { sleep } from "./util/sleep.ts";
export { randomChars, randomHex } from "./util/random_pool.ts";
// Wire codecs for runtime plugins: the 5-byte envelope of gRPC and Connect, protobuf messages.
export {
  COMPRESSED_FLAG,
  encodeEnvelope,
  END_STREAM_FLAG,
  ENVELOPE_HEADER_BYTES,
  EnvelopeReader,
} from "./wire/envelope.ts";
export type { Envelope, EnvelopeReaderOptions } from "./wire/envelope.ts";
export { defineMessage, field } from "./wire/protobuf.ts";
export type {
  FieldConstructor,
  FieldConstructors,
  FieldLabel,
  FieldSpec,
  MessageType,
  ScalarKind,
} from "./wire/protobuf.ts";
/**
 * The remote-sandbox base: a provider implements provision / exec / files / terminate
 * ({@link SandboxProvider}); {@link RemoteSandboxRuntime} owns the ledger, the creation
 * limiter, the `stop`/`stopConfirmed` state machine, the lifetime a harness timeout is
 * capped to and the in-sandbox process-group protocol; {@link stopByIdWith} makes a
 * plugin's `stopById` and {@link findPendingWith} its `findPending`.
 */
export { RemoteSandboxRuntime } from "./remote/runtime.ts";
export type { RemoteRuntimeOptions } from "./remote/runtime.ts";
export type {
  CreatedSandbox,
  ErrorDetail,
  ExecRequest,
  ExecResult,
  JobTiming,
  SandboxCreation,
  SandboxFiles,
  SandboxJobs,
  SandboxJournal,
  SandboxProvider,
} from "./remote/provider.ts";
export { stopByIdWith } from "./remote/stop_by_id.ts";
export type { StopByIdOptions, TerminateById } from "./remote/stop_by_id.ts";
export { findPendingWith } from "./remote/find_pending.ts";
export type { FindByName } from "./remote/find_pending.ts";
export {
  ENV_NAME,
  groupWrapperArgv,
  jobLaunchArgv,
  jobPaths,
  killCommand,
  parseExitFile,
  shellJoin,
  shellQuote,
} from "./remote/process_group.ts";
export type { JobPaths } from "./remote/process_group.ts";
export type { CreateRateLimit } from "./runtime/create_limiter.ts";
