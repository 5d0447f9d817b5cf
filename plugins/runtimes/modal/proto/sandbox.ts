/**
 * Modal sandbox messages (`modal.client`): creation, task lookup, wait, terminate, tunnels, lookup by name. Field numbers are those of the official SDK's generated protobuf code
 * (`modal@0.7.2`); names are the proto names in camelCase. Only the fields verifiers-ts reads
 * or writes are declared; others are skipped on decode.
 *
 * @module
 */
import { defineMessage, field, type MessageType } from "../../../../kit/mod.ts";
import { GenericResult, GPUConfig } from "./control.ts";

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
  field.singular("memoryMb", 2, "uint32"),
  field.singular("milliCpu", 3, "uint32"),
  field.optional("gpuConfig", 4, () => GPUConfig),
  field.singular("memoryMbMax", 5, "uint32"),
  field.singular("ephemeralDiskMb", 6, "uint32"),
  field.singular("milliCpuMax", 7, "uint32"),
]);

/** `PortSpec`. */
export interface PortSpec {
  port: number;
  unencrypted: boolean;
  tunnelType: number | undefined;
}

/** `PortSpec`. */
export const PortSpec: MessageType<PortSpec> = defineMessage<PortSpec>("PortSpec", [
  field.singular("port", 1, "uint32"),
  field.singular("unencrypted", 2, "bool"),
  field.optional("tunnelType", 3, "int32"),
]);

/** `PortSpecs`. */
export interface PortSpecs {
  ports: PortSpec[];
}

/** `PortSpecs`. */
export const PortSpecs: MessageType<PortSpecs> = defineMessage<PortSpecs>("PortSpecs", [
  field.repeated("ports", 1, () => PortSpec),
]);

/** `NetworkAccess`. */
export interface NetworkAccess {
  networkAccessType: number;
  allowedCidrs: string[];
}

/** `NetworkAccess`. */
export const NetworkAccess: MessageType<NetworkAccess> = defineMessage<NetworkAccess>(
  "NetworkAccess",
  [field.singular("networkAccessType", 1, "int32"), field.repeated("allowedCidrs", 2, "string")],
);

/** `SchedulerPlacement`. */
export interface SchedulerPlacement {
  regions: string[];
}

/** `SchedulerPlacement`. */
export const SchedulerPlacement: MessageType<SchedulerPlacement> = defineMessage<
  SchedulerPlacement
>("SchedulerPlacement", [field.repeated("regions", 4, "string")]);

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
  field.repeated("entrypointArgs", 1, "string"),
  field.singular("imageId", 3, "string"),
  field.repeated("secretIds", 4, "string"),
  field.optional("resources", 5, () => Resources),
  field.singular("timeoutSecs", 7, "uint32"),
  field.optional("workdir", 8, "string"),
  field.singular("blockNetwork", 11, "bool"),
  field.optional("schedulerPlacement", 17, () => SchedulerPlacement),
  field.optional("openPorts", 20, () => PortSpecs),
  field.optional("networkAccess", 22, () => NetworkAccess),
  field.optional("proxyId", 23, "string"),
  field.singular("cloudProviderStr", 26, "string"),
  field.singular("verbose", 29, "bool"),
  field.optional("name", 30, "string"),
  field.map("experimentalOptions", 31, "bool"),
  field.optional("idleTimeoutSecs", 33, "uint32"),
]);

/** `SandboxCreateRequest`. */
export interface SandboxCreateRequest {
  appId: string;
  definition: SandboxDefinition | undefined;
  environmentName: string;
}

/** `SandboxCreateRequest`. */
export const SandboxCreateRequest = defineMessage<SandboxCreateRequest>("SandboxCreateRequest", [
  field.singular("appId", 1, "string"),
  field.optional("definition", 2, () => SandboxDefinition),
  field.singular("environmentName", 3, "string"),
]);

/** `SandboxCreateResponse`. */
export interface SandboxCreateResponse {
  sandboxId: string;
}

/** `SandboxCreateResponse`. */
export const SandboxCreateResponse = defineMessage<SandboxCreateResponse>(
  "SandboxCreateResponse",
  [field.singular("sandboxId", 1, "string")],
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
  [
    field.singular("sandboxId", 1, "string"),
    field.optional("timeout", 2, "float"),
    field.singular("waitUntilReady", 3, "bool"),
  ],
);

/** `SandboxGetTaskIdResponse`. */
export interface SandboxGetTaskIdResponse {
  taskId: string | undefined;
  taskResult: GenericResult | undefined;
}

/** `SandboxGetTaskIdResponse`. */
export const SandboxGetTaskIdResponse = defineMessage<SandboxGetTaskIdResponse>(
  "SandboxGetTaskIdResponse",
  [field.optional("taskId", 1, "string"), field.optional("taskResult", 2, () => GenericResult)],
);

/** `TaskGetCommandRouterAccessRequest`. */
export interface TaskGetCommandRouterAccessRequest {
  taskId: string;
}

/** `TaskGetCommandRouterAccessRequest`. */
export const TaskGetCommandRouterAccessRequest = defineMessage<TaskGetCommandRouterAccessRequest>(
  "TaskGetCommandRouterAccessRequest",
  [field.singular("taskId", 1, "string")],
);

/** `TaskGetCommandRouterAccessResponse`. */
export interface TaskGetCommandRouterAccessResponse {
  jwt: string;
  url: string;
}

/** `TaskGetCommandRouterAccessResponse`. */
export const TaskGetCommandRouterAccessResponse = defineMessage<
  TaskGetCommandRouterAccessResponse
>("TaskGetCommandRouterAccessResponse", [
  field.singular("jwt", 1, "string"),
  field.singular("url", 2, "string"),
]);

/** `SandboxWaitRequest`. */
export interface SandboxWaitRequest {
  sandboxId: string;
  timeout: number;
}

/** `SandboxWaitRequest`. */
export const SandboxWaitRequest = defineMessage<SandboxWaitRequest>("SandboxWaitRequest", [
  field.singular("sandboxId", 1, "string"),
  field.singular("timeout", 2, "float"),
]);

/** `SandboxWaitResponse`. */
export interface SandboxWaitResponse {
  result: GenericResult | undefined;
}

/** `SandboxWaitResponse`. */
export const SandboxWaitResponse = defineMessage<SandboxWaitResponse>("SandboxWaitResponse", [
  field.optional("result", 1, () => GenericResult),
]);

/** `SandboxTerminateRequest`. */
export interface SandboxTerminateRequest {
  sandboxId: string;
}

/** `SandboxTerminateRequest`. */
export const SandboxTerminateRequest = defineMessage<SandboxTerminateRequest>(
  "SandboxTerminateRequest",
  [field.singular("sandboxId", 1, "string")],
);

/** `SandboxTerminateResponse`. */
export interface SandboxTerminateResponse {
  existingResult: GenericResult | undefined;
}

/** `SandboxTerminateResponse`. */
export const SandboxTerminateResponse = defineMessage<SandboxTerminateResponse>(
  "SandboxTerminateResponse",
  [field.optional("existingResult", 1, () => GenericResult)],
);

/** `SandboxGetTunnelsRequest`. */
export interface SandboxGetTunnelsRequest {
  sandboxId: string;
  timeout: number;
}

/** `SandboxGetTunnelsRequest`. */
export const SandboxGetTunnelsRequest = defineMessage<SandboxGetTunnelsRequest>(
  "SandboxGetTunnelsRequest",
  [field.singular("sandboxId", 1, "string"), field.singular("timeout", 2, "float")],
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
  field.singular("host", 1, "string"),
  field.singular("port", 2, "uint32"),
  field.optional("unencryptedHost", 3, "string"),
  field.optional("unencryptedPort", 4, "uint32"),
  field.singular("containerPort", 5, "uint32"),
]);

/** `SandboxGetTunnelsResponse`. */
export interface SandboxGetTunnelsResponse {
  result: GenericResult | undefined;
  tunnels: TunnelData[];
}

/** `SandboxGetTunnelsResponse`. */
export const SandboxGetTunnelsResponse = defineMessage<SandboxGetTunnelsResponse>(
  "SandboxGetTunnelsResponse",
  [
    field.optional("result", 1, () => GenericResult),
    field.repeated("tunnels", 2, () => TunnelData),
  ],
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
    field.singular("sandboxName", 1, "string"),
    field.singular("environmentName", 2, "string"),
    field.singular("appName", 3, "string"),
  ],
);

/** `SandboxGetFromNameResponse`. */
export interface SandboxGetFromNameResponse {
  sandboxId: string;
}

/** `SandboxGetFromNameResponse`. */
export const SandboxGetFromNameResponse = defineMessage<SandboxGetFromNameResponse>(
  "SandboxGetFromNameResponse",
  [field.singular("sandboxId", 1, "string")],
);
