/**
 * The Modal protobuf messages the runtime uses (packages `modal.client` and
 * `modal.task_command_router`), with their field numbers from the
 * official SDK's generated protobuf code (`modal@0.7.2`). Field names are the proto names in camelCase. Only the
 * fields verifiers-ts reads or writes are declared; others are skipped on decode.
 *
 * @module
 */
import { defineMessage, f } from "./protobuf.ts";
import type { MessageType } from "./protobuf.ts";

/** `ObjectCreationType` values. */
export const ObjectCreationType = {
  UNSPECIFIED: 0,
  CREATE_IF_MISSING: 1,
  CREATE_FAIL_IF_EXISTS: 2,
  CREATE_OVERWRITE_IF_EXISTS: 3,
  ANONYMOUS_OWNED_BY_APP: 4,
  EPHEMERAL: 5,
} as const;

/** `GenericResult.GenericStatus` values. */
export const GenericStatus = {
  UNSPECIFIED: 0,
  SUCCESS: 1,
  FAILURE: 2,
  TERMINATED: 3,
  TIMEOUT: 4,
  INIT_FAILURE: 5,
  INTERNAL_FAILURE: 6,
  IDLE_TIMEOUT: 7,
} as const;

/** `NetworkAccess.NetworkAccessType` values. */
export const NetworkAccessType = { UNSPECIFIED: 0, OPEN: 1, BLOCKED: 2, ALLOWLIST: 3 } as const;

/** `TaskExecStdoutConfig` / `TaskExecStderrConfig` values. */
export const StdioConfig = { DEVNULL: 0, PIPE: 1, STDOUT: 2 } as const;

/** `TaskExecStdioFileDescriptor` values. */
export const StdioFd = { STDOUT: 0, STDERR: 1 } as const;

// ---------------------------------------------------------------- modal.client

/** `AuthTokenGetRequest` (empty). */
export type AuthTokenGetRequest = Record<string, never>;
/** `AuthTokenGetRequest`. */
export const AuthTokenGetRequest = defineMessage<AuthTokenGetRequest>("AuthTokenGetRequest", []);

/** `AuthTokenGetResponse`. */
export interface AuthTokenGetResponse {
  token: string;
}
/** `AuthTokenGetResponse`. */
export const AuthTokenGetResponse = defineMessage<AuthTokenGetResponse>("AuthTokenGetResponse", [
  f.s("token", 1, "string"),
]);

/** `AppGetOrCreateRequest`. */
export interface AppGetOrCreateRequest {
  appName: string;
  environmentName: string;
  objectCreationType: number;
}
/** `AppGetOrCreateRequest`. */
export const AppGetOrCreateRequest = defineMessage<AppGetOrCreateRequest>(
  "AppGetOrCreateRequest",
  [
    f.s("appName", 1, "string"),
    f.s("environmentName", 2, "string"),
    f.s("objectCreationType", 3, "int32"),
  ],
);

/** `AppGetOrCreateResponse`. */
export interface AppGetOrCreateResponse {
  appId: string;
}
/** `AppGetOrCreateResponse`. */
export const AppGetOrCreateResponse = defineMessage<AppGetOrCreateResponse>(
  "AppGetOrCreateResponse",
  [f.s("appId", 1, "string")],
);

/** `GenericResult`. */
export interface GenericResult {
  status: number;
  exception: string;
  exitcode: number;
  traceback: string;
}
/** `GenericResult`. */
export const GenericResult: MessageType<GenericResult> = defineMessage<GenericResult>(
  "GenericResult",
  [
    f.s("status", 1, "int32"),
    f.s("exception", 2, "string"),
    f.s("exitcode", 3, "int32"),
    f.s("traceback", 4, "string"),
  ],
);

/** `GPUConfig`. */
export interface GPUConfig {
  type: number;
  count: number;
  gpuType: string;
}
/** `GPUConfig`. */
export const GPUConfig: MessageType<GPUConfig> = defineMessage<GPUConfig>("GPUConfig", [
  f.s("type", 1, "int32"),
  f.s("count", 2, "uint32"),
  f.s("gpuType", 4, "string"),
]);

/** `BaseImage`. */
export interface BaseImage {
  imageId: string;
  dockerTag: string;
}
/** `BaseImage`. */
export const BaseImage: MessageType<BaseImage> = defineMessage<BaseImage>("BaseImage", [
  f.s("imageId", 1, "string"),
  f.s("dockerTag", 2, "string"),
]);

/** `ImageRegistryConfig`. */
export interface ImageRegistryConfig {
  registryAuthType: number;
  secretId: string;
}
/** `ImageRegistryConfig`. */
export const ImageRegistryConfig: MessageType<ImageRegistryConfig> = defineMessage<
  ImageRegistryConfig
>("ImageRegistryConfig", [f.s("registryAuthType", 1, "int32"), f.s("secretId", 2, "string")]);

/** `ImageContextFile`. */
export interface ImageContextFile {
  filename: string;
  data: Uint8Array;
}
/** `ImageContextFile`. */
export const ImageContextFile: MessageType<ImageContextFile> = defineMessage<ImageContextFile>(
  "ImageContextFile",
  [f.s("filename", 1, "string"), f.s("data", 2, "bytes")],
);

/** `Image` (the build definition). */
export interface Image {
  baseImages: BaseImage[];
  dockerfileCommands: string[];
  contextFiles: ImageContextFile[];
  secretIds: string[];
  gpuConfig: GPUConfig | undefined;
  imageRegistryConfig: ImageRegistryConfig | undefined;
}
/** `Image`. */
export const Image: MessageType<Image> = defineMessage<Image>("Image", [
  f.r("baseImages", 5, () => BaseImage),
  f.r("dockerfileCommands", 6, "string"),
  f.r("contextFiles", 7, () => ImageContextFile),
  f.r("secretIds", 12, "string"),
  f.o("gpuConfig", 16, () => GPUConfig),
  f.o("imageRegistryConfig", 17, () => ImageRegistryConfig),
]);

/** `ImageGetOrCreateRequest`. */
export interface ImageGetOrCreateRequest {
  image: Image | undefined;
  appId: string;
  existingImageId: string;
  forceBuild: boolean;
  builderVersion: string;
  ignoreCache: boolean;
}
/** `ImageGetOrCreateRequest`. */
export const ImageGetOrCreateRequest = defineMessage<ImageGetOrCreateRequest>(
  "ImageGetOrCreateRequest",
  [
    f.o("image", 2, () => Image),
    f.s("appId", 4, "string"),
    f.s("existingImageId", 5, "string"),
    f.s("forceBuild", 7, "bool"),
    f.s("builderVersion", 9, "string"),
    f.s("ignoreCache", 11, "bool"),
  ],
);

/** `ImageGetOrCreateResponse`. */
export interface ImageGetOrCreateResponse {
  imageId: string;
  result: GenericResult | undefined;
}
/** `ImageGetOrCreateResponse`. */
export const ImageGetOrCreateResponse = defineMessage<ImageGetOrCreateResponse>(
  "ImageGetOrCreateResponse",
  [f.s("imageId", 1, "string"), f.o("result", 2, () => GenericResult)],
);

/** `ImageJoinStreamingRequest`. */
export interface ImageJoinStreamingRequest {
  imageId: string;
  timeout: number;
  lastEntryId: string;
  includeLogsForFinished: boolean;
}
/** `ImageJoinStreamingRequest`. */
export const ImageJoinStreamingRequest = defineMessage<ImageJoinStreamingRequest>(
  "ImageJoinStreamingRequest",
  [
    f.s("imageId", 1, "string"),
    f.s("timeout", 2, "float"),
    f.s("lastEntryId", 3, "string"),
    f.s("includeLogsForFinished", 4, "bool"),
  ],
);

/** `TaskLogs` (only the text is used). */
export interface TaskLogs {
  data: string;
  fileDescriptor: number;
}
/** `TaskLogs`. */
export const TaskLogs: MessageType<TaskLogs> = defineMessage<TaskLogs>("TaskLogs", [
  f.s("data", 1, "string"),
  f.s("fileDescriptor", 8, "int32"),
]);

/** `ImageJoinStreamingResponse`. */
export interface ImageJoinStreamingResponse {
  result: GenericResult | undefined;
  taskLogs: TaskLogs[];
  entryId: string;
  eof: boolean;
}
/** `ImageJoinStreamingResponse`. */
export const ImageJoinStreamingResponse = defineMessage<ImageJoinStreamingResponse>(
  "ImageJoinStreamingResponse",
  [
    f.o("result", 1, () => GenericResult),
    f.r("taskLogs", 2, () => TaskLogs),
    f.s("entryId", 3, "string"),
    f.s("eof", 4, "bool"),
  ],
);

/** `Resources`. */
export interface Resources {
  memoryMb: number;
  milliCpu: number;
  gpuConfig: GPUConfig | undefined;
  memoryMbMax: number;
  ephemeralDiskMb: number;
  milliCpuMax: number;
}
/** `Resources`. */
export const Resources: MessageType<Resources> = defineMessage<Resources>("Resources", [
  f.s("memoryMb", 2, "uint32"),
  f.s("milliCpu", 3, "uint32"),
  f.o("gpuConfig", 4, () => GPUConfig),
  f.s("memoryMbMax", 5, "uint32"),
  f.s("ephemeralDiskMb", 6, "uint32"),
  f.s("milliCpuMax", 7, "uint32"),
]);

/** `PortSpec`. */
export interface PortSpec {
  port: number;
  unencrypted: boolean;
  tunnelType: number | undefined;
}
/** `PortSpec`. */
export const PortSpec: MessageType<PortSpec> = defineMessage<PortSpec>("PortSpec", [
  f.s("port", 1, "uint32"),
  f.s("unencrypted", 2, "bool"),
  f.o("tunnelType", 3, "int32"),
]);

/** `PortSpecs`. */
export interface PortSpecs {
  ports: PortSpec[];
}
/** `PortSpecs`. */
export const PortSpecs: MessageType<PortSpecs> = defineMessage<PortSpecs>("PortSpecs", [
  f.r("ports", 1, () => PortSpec),
]);

/** `NetworkAccess`. */
export interface NetworkAccess {
  networkAccessType: number;
  allowedCidrs: string[];
}
/** `NetworkAccess`. */
export const NetworkAccess: MessageType<NetworkAccess> = defineMessage<NetworkAccess>(
  "NetworkAccess",
  [f.s("networkAccessType", 1, "int32"), f.r("allowedCidrs", 2, "string")],
);

/** `SchedulerPlacement`. */
export interface SchedulerPlacement {
  regions: string[];
}
/** `SchedulerPlacement`. */
export const SchedulerPlacement: MessageType<SchedulerPlacement> = defineMessage<
  SchedulerPlacement
>("SchedulerPlacement", [f.r("regions", 4, "string")]);

/** `Sandbox` (the sandbox definition sent at creation). */
export interface SandboxDefinition {
  entrypointArgs: string[];
  imageId: string;
  secretIds: string[];
  resources: Resources | undefined;
  timeoutSecs: number;
  workdir: string | undefined;
  blockNetwork: boolean;
  schedulerPlacement: SchedulerPlacement | undefined;
  openPorts: PortSpecs | undefined;
  networkAccess: NetworkAccess | undefined;
  proxyId: string | undefined;
  cloudProviderStr: string;
  verbose: boolean;
  name: string | undefined;
  experimentalOptions: Record<string, boolean>;
  idleTimeoutSecs: number | undefined;
}
/** `Sandbox`. */
export const SandboxDefinition: MessageType<SandboxDefinition> = defineMessage<
  SandboxDefinition
>("Sandbox", [
  f.r("entrypointArgs", 1, "string"),
  f.s("imageId", 3, "string"),
  f.r("secretIds", 4, "string"),
  f.o("resources", 5, () => Resources),
  f.s("timeoutSecs", 7, "uint32"),
  f.o("workdir", 8, "string"),
  f.s("blockNetwork", 11, "bool"),
  f.o("schedulerPlacement", 17, () => SchedulerPlacement),
  f.o("openPorts", 20, () => PortSpecs),
  f.o("networkAccess", 22, () => NetworkAccess),
  f.o("proxyId", 23, "string"),
  f.s("cloudProviderStr", 26, "string"),
  f.s("verbose", 29, "bool"),
  f.o("name", 30, "string"),
  f.m("experimentalOptions", 31, "bool"),
  f.o("idleTimeoutSecs", 33, "uint32"),
]);

/** `SandboxCreateRequest`. */
export interface SandboxCreateRequest {
  appId: string;
  definition: SandboxDefinition | undefined;
  environmentName: string;
}
/** `SandboxCreateRequest`. */
export const SandboxCreateRequest = defineMessage<SandboxCreateRequest>("SandboxCreateRequest", [
  f.s("appId", 1, "string"),
  f.o("definition", 2, () => SandboxDefinition),
  f.s("environmentName", 3, "string"),
]);

/** `SandboxCreateResponse`. */
export interface SandboxCreateResponse {
  sandboxId: string;
}
/** `SandboxCreateResponse`. */
export const SandboxCreateResponse = defineMessage<SandboxCreateResponse>(
  "SandboxCreateResponse",
  [f.s("sandboxId", 1, "string")],
);

/** `SandboxGetTaskIdRequest`. */
export interface SandboxGetTaskIdRequest {
  sandboxId: string;
  timeout: number | undefined;
  waitUntilReady: boolean;
}
/** `SandboxGetTaskIdRequest`. */
export const SandboxGetTaskIdRequest = defineMessage<SandboxGetTaskIdRequest>(
  "SandboxGetTaskIdRequest",
  [f.s("sandboxId", 1, "string"), f.o("timeout", 2, "float"), f.s("waitUntilReady", 3, "bool")],
);

/** `SandboxGetTaskIdResponse`. */
export interface SandboxGetTaskIdResponse {
  taskId: string | undefined;
  taskResult: GenericResult | undefined;
}
/** `SandboxGetTaskIdResponse`. */
export const SandboxGetTaskIdResponse = defineMessage<SandboxGetTaskIdResponse>(
  "SandboxGetTaskIdResponse",
  [f.o("taskId", 1, "string"), f.o("taskResult", 2, () => GenericResult)],
);

/** `TaskGetCommandRouterAccessRequest`. */
export interface TaskGetCommandRouterAccessRequest {
  taskId: string;
}
/** `TaskGetCommandRouterAccessRequest`. */
export const TaskGetCommandRouterAccessRequest = defineMessage<TaskGetCommandRouterAccessRequest>(
  "TaskGetCommandRouterAccessRequest",
  [f.s("taskId", 1, "string")],
);

/** `TaskGetCommandRouterAccessResponse`. */
export interface TaskGetCommandRouterAccessResponse {
  jwt: string;
  url: string;
}
/** `TaskGetCommandRouterAccessResponse`. */
export const TaskGetCommandRouterAccessResponse = defineMessage<
  TaskGetCommandRouterAccessResponse
>("TaskGetCommandRouterAccessResponse", [f.s("jwt", 1, "string"), f.s("url", 2, "string")]);

/** `SandboxWaitRequest`. */
export interface SandboxWaitRequest {
  sandboxId: string;
  timeout: number;
}
/** `SandboxWaitRequest`. */
export const SandboxWaitRequest = defineMessage<SandboxWaitRequest>("SandboxWaitRequest", [
  f.s("sandboxId", 1, "string"),
  f.s("timeout", 2, "float"),
]);

/** `SandboxWaitResponse`. */
export interface SandboxWaitResponse {
  result: GenericResult | undefined;
}
/** `SandboxWaitResponse`. */
export const SandboxWaitResponse = defineMessage<SandboxWaitResponse>("SandboxWaitResponse", [
  f.o("result", 1, () => GenericResult),
]);

/** `SandboxTerminateRequest`. */
export interface SandboxTerminateRequest {
  sandboxId: string;
}
/** `SandboxTerminateRequest`. */
export const SandboxTerminateRequest = defineMessage<SandboxTerminateRequest>(
  "SandboxTerminateRequest",
  [f.s("sandboxId", 1, "string")],
);

/** `SandboxTerminateResponse`. */
export interface SandboxTerminateResponse {
  existingResult: GenericResult | undefined;
}
/** `SandboxTerminateResponse`. */
export const SandboxTerminateResponse = defineMessage<SandboxTerminateResponse>(
  "SandboxTerminateResponse",
  [f.o("existingResult", 1, () => GenericResult)],
);

/** `SandboxGetTunnelsRequest`. */
export interface SandboxGetTunnelsRequest {
  sandboxId: string;
  timeout: number;
}
/** `SandboxGetTunnelsRequest`. */
export const SandboxGetTunnelsRequest = defineMessage<SandboxGetTunnelsRequest>(
  "SandboxGetTunnelsRequest",
  [f.s("sandboxId", 1, "string"), f.s("timeout", 2, "float")],
);

/** `TunnelData`. */
export interface TunnelData {
  host: string;
  port: number;
  unencryptedHost: string | undefined;
  unencryptedPort: number | undefined;
  containerPort: number;
}
/** `TunnelData`. */
export const TunnelData: MessageType<TunnelData> = defineMessage<TunnelData>("TunnelData", [
  f.s("host", 1, "string"),
  f.s("port", 2, "uint32"),
  f.o("unencryptedHost", 3, "string"),
  f.o("unencryptedPort", 4, "uint32"),
  f.s("containerPort", 5, "uint32"),
]);

/** `SandboxGetTunnelsResponse`. */
export interface SandboxGetTunnelsResponse {
  result: GenericResult | undefined;
  tunnels: TunnelData[];
}
/** `SandboxGetTunnelsResponse`. */
export const SandboxGetTunnelsResponse = defineMessage<SandboxGetTunnelsResponse>(
  "SandboxGetTunnelsResponse",
  [f.o("result", 1, () => GenericResult), f.r("tunnels", 2, () => TunnelData)],
);

/** `SecretGetOrCreateRequest`. */
export interface SecretGetOrCreateRequest {
  deploymentName: string;
  environmentName: string;
  objectCreationType: number;
  envDict: Record<string, string>;
  appId: string;
  requiredKeys: string[];
}
/** `SecretGetOrCreateRequest`. */
export const SecretGetOrCreateRequest = defineMessage<SecretGetOrCreateRequest>(
  "SecretGetOrCreateRequest",
  [
    f.s("deploymentName", 1, "string"),
    f.s("environmentName", 3, "string"),
    f.s("objectCreationType", 4, "int32"),
    f.m("envDict", 5, "string"),
    f.s("appId", 6, "string"),
    f.r("requiredKeys", 7, "string"),
  ],
);

/** `SecretGetOrCreateResponse`. */
export interface SecretGetOrCreateResponse {
  secretId: string;
}
/** `SecretGetOrCreateResponse`. */
export const SecretGetOrCreateResponse = defineMessage<SecretGetOrCreateResponse>(
  "SecretGetOrCreateResponse",
  [f.s("secretId", 1, "string")],
);

/** `SandboxGetFromNameRequest`. */
export interface SandboxGetFromNameRequest {
  sandboxName: string;
  environmentName: string;
  appName: string;
}
/** `SandboxGetFromNameRequest`. */
export const SandboxGetFromNameRequest = defineMessage<SandboxGetFromNameRequest>(
  "SandboxGetFromNameRequest",
  [
    f.s("sandboxName", 1, "string"),
    f.s("environmentName", 2, "string"),
    f.s("appName", 3, "string"),
  ],
);

/** `SandboxGetFromNameResponse`. */
export interface SandboxGetFromNameResponse {
  sandboxId: string;
}
/** `SandboxGetFromNameResponse`. */
export const SandboxGetFromNameResponse = defineMessage<SandboxGetFromNameResponse>(
  "SandboxGetFromNameResponse",
  [f.s("sandboxId", 1, "string")],
);

// ---------------------------------------------------- modal.task_command_router

/** `TaskExecStartRequest`. */
export interface TaskExecStartRequest {
  taskId: string;
  execId: string;
  commandArgs: string[];
  stdoutConfig: number;
  stderrConfig: number;
  timeoutSecs: number | undefined;
  workdir: string | undefined;
  secretIds: string[];
  runtimeDebug: boolean;
}
/** `TaskExecStartRequest`. */
export const TaskExecStartRequest = defineMessage<TaskExecStartRequest>("TaskExecStartRequest", [
  f.s("taskId", 1, "string"),
  f.s("execId", 2, "string"),
  f.r("commandArgs", 3, "string"),
  f.s("stdoutConfig", 4, "int32"),
  f.s("stderrConfig", 5, "int32"),
  f.o("timeoutSecs", 6, "uint32"),
  f.o("workdir", 7, "string"),
  f.r("secretIds", 8, "string"),
  f.s("runtimeDebug", 10, "bool"),
]);

/** `TaskExecStartResponse` (empty). */
export type TaskExecStartResponse = Record<string, never>;
/** `TaskExecStartResponse`. */
export const TaskExecStartResponse = defineMessage<TaskExecStartResponse>(
  "TaskExecStartResponse",
  [],
);

/** `TaskExecStdioReadRequest`. */
export interface TaskExecStdioReadRequest {
  taskId: string;
  execId: string;
  offset: number;
  fileDescriptor: number;
}
/** `TaskExecStdioReadRequest`. */
export const TaskExecStdioReadRequest = defineMessage<TaskExecStdioReadRequest>(
  "TaskExecStdioReadRequest",
  [
    f.s("taskId", 1, "string"),
    f.s("execId", 2, "string"),
    f.s("offset", 3, "uint64"),
    f.s("fileDescriptor", 4, "int32"),
  ],
);

/** `TaskExecStdioReadResponse`. */
export interface TaskExecStdioReadResponse {
  data: Uint8Array;
}
/** `TaskExecStdioReadResponse`. */
export const TaskExecStdioReadResponse = defineMessage<TaskExecStdioReadResponse>(
  "TaskExecStdioReadResponse",
  [f.s("data", 1, "bytes")],
);

/** `TaskExecStdinWriteRequest`. */
export interface TaskExecStdinWriteRequest {
  taskId: string;
  execId: string;
  offset: number;
  data: Uint8Array;
  eof: boolean;
}
/** `TaskExecStdinWriteRequest`. */
export const TaskExecStdinWriteRequest = defineMessage<TaskExecStdinWriteRequest>(
  "TaskExecStdinWriteRequest",
  [
    f.s("taskId", 1, "string"),
    f.s("execId", 2, "string"),
    f.s("offset", 3, "uint64"),
    f.s("data", 4, "bytes"),
    f.s("eof", 5, "bool"),
  ],
);

/** `TaskExecStdinWriteResponse` (empty). */
export type TaskExecStdinWriteResponse = Record<string, never>;
/** `TaskExecStdinWriteResponse`. */
export const TaskExecStdinWriteResponse = defineMessage<TaskExecStdinWriteResponse>(
  "TaskExecStdinWriteResponse",
  [],
);

/** `TaskExecWaitRequest` (also the shape of `TaskExecPollRequest`). */
export interface TaskExecWaitRequest {
  taskId: string;
  execId: string;
}
/** `TaskExecWaitRequest`. */
export const TaskExecWaitRequest = defineMessage<TaskExecWaitRequest>("TaskExecWaitRequest", [
  f.s("taskId", 1, "string"),
  f.s("execId", 2, "string"),
]);

/** `TaskExecWaitResponse` (also `TaskExecPollResponse`): oneof exit_status. */
export interface TaskExecWaitResponse {
  code: number | undefined;
  signal: number | undefined;
}
/** `TaskExecWaitResponse`. */
export const TaskExecWaitResponse = defineMessage<TaskExecWaitResponse>("TaskExecWaitResponse", [
  f.o("code", 1, "int32"),
  f.o("signal", 2, "int32"),
]);

/** gRPC paths of the control-plane service. */
export const CONTROL_SERVICE = "/modal.client.ModalClient/";
/** gRPC paths of the task command router service. */
export const ROUTER_SERVICE = "/modal.task_command_router.TaskCommandRouter/";
