/**
 * The Modal messages the fake serves, as `.proto` text read by the test side's own codec
 * (proto_schema.ts), independent of the runtime's schemas in plugins/runtimes/modal/proto/.
 * Field numbers and types are those the official SDK's generated code writes
 * (`node_modules/modal/dist/index.js`, `modal@0.7.2`); only the fields either client uses
 * are declared, so the others show on the wire as unknown (`?<n>`). A nested upstream
 * message is declared at the top level (`Sandbox` is `modal.client.Sandbox`).
 *
 * @module
 */
import { protoSchema } from "./proto_schema.ts";
import type { ProtoSchema } from "./proto_schema.ts";

/** `modal.client`: the control plane. */
export const CONTROL_PROTO: ProtoSchema = protoSchema(
  "modal.client",
  `
message AuthTokenGetRequest {}
message AuthTokenGetResponse {
  string token = 1;
}
message AppGetOrCreateRequest {
  string app_name = 1;
  string environment_name = 2;
  int32 object_creation_type = 3;
}
message AppGetOrCreateResponse {
  string app_id = 1;
}
message GenericResult {
  int32 status = 1;
  string exception = 2;
  int32 exitcode = 3;
  string traceback = 4;
}
message GPUConfig {
  int32 type = 1;
  uint32 count = 2;
  string gpu_type = 4;
}
message SecretGetOrCreateRequest {
  string deployment_name = 1;
  string environment_name = 3;
  int32 object_creation_type = 4;
  map<string, string> env_dict = 5;
  string app_id = 6;
  repeated string required_keys = 7;
}
message SecretGetOrCreateResponse {
  string secret_id = 1;
}
message BaseImage {
  string image_id = 1;
  string docker_tag = 2;
}
message ImageRegistryConfig {
  int32 registry_auth_type = 1;
  string secret_id = 2;
}
message ImageContextFile {
  string filename = 1;
  bytes data = 2;
}
message Image {
  repeated BaseImage base_images = 5;
  repeated string dockerfile_commands = 6;
  repeated ImageContextFile context_files = 7;
  repeated string secret_ids = 12;
  GPUConfig gpu_config = 16;
  ImageRegistryConfig image_registry_config = 17;
}
message ImageGetOrCreateRequest {
  Image image = 2;
  string app_id = 4;
  string existing_image_id = 5;
  bool force_build = 7;
  string builder_version = 9;
  bool ignore_cache = 11;
}
message ImageGetOrCreateResponse {
  string image_id = 1;
  GenericResult result = 2;
}
message ImageJoinStreamingRequest {
  string image_id = 1;
  float timeout = 2;
  string last_entry_id = 3;
  bool include_logs_for_finished = 4;
}
message TaskLogs {
  string data = 1;
  int32 file_descriptor = 8;
}
message ImageJoinStreamingResponse {
  GenericResult result = 1;
  repeated TaskLogs task_logs = 2;
  string entry_id = 3;
  bool eof = 4;
}
message Resources {
  uint32 memory_mb = 2;
  uint32 milli_cpu = 3;
  GPUConfig gpu_config = 4;
  uint32 memory_mb_max = 5;
  uint32 ephemeral_disk_mb = 6;
  uint32 milli_cpu_max = 7;
}
message PortSpec {
  uint32 port = 1;
  bool unencrypted = 2;
  optional int32 tunnel_type = 3;
}
message PortSpecs {
  repeated PortSpec ports = 1;
}
message NetworkAccess {
  int32 network_access_type = 1;
  repeated string allowed_cidrs = 2;
}
message SchedulerPlacement {
  repeated string regions = 4;
}
message Sandbox {
  repeated string entrypoint_args = 1;
  string image_id = 3;
  repeated string secret_ids = 4;
  Resources resources = 5;
  uint32 timeout_secs = 7;
  optional string workdir = 8;
  bool block_network = 11;
  SchedulerPlacement scheduler_placement = 17;
  PortSpecs open_ports = 20;
  NetworkAccess network_access = 22;
  optional string proxy_id = 23;
  string cloud_provider_str = 26;
  bool verbose = 29;
  optional string name = 30;
  map<string, bool> experimental_options = 31;
  optional uint32 idle_timeout_secs = 33;
}
message SandboxCreateRequest {
  string app_id = 1;
  Sandbox definition = 2;
  string environment_name = 3;
}
message SandboxCreateResponse {
  string sandbox_id = 1;
}
message SandboxGetTaskIdRequest {
  string sandbox_id = 1;
  optional float timeout = 2;
  bool wait_until_ready = 3;
}
message SandboxGetTaskIdResponse {
  optional string task_id = 1;
  GenericResult task_result = 2;
}
message TaskGetCommandRouterAccessRequest {
  string task_id = 1;
}
message TaskGetCommandRouterAccessResponse {
  string jwt = 1;
  string url = 2;
}
message SandboxWaitRequest {
  string sandbox_id = 1;
  float timeout = 2;
}
message SandboxWaitResponse {
  GenericResult result = 1;
}
message SandboxTerminateRequest {
  string sandbox_id = 1;
}
message SandboxTerminateResponse {
  GenericResult existing_result = 1;
}
message SandboxGetTunnelsRequest {
  string sandbox_id = 1;
  float timeout = 2;
}
message TunnelData {
  string host = 1;
  uint32 port = 2;
  optional string unencrypted_host = 3;
  optional uint32 unencrypted_port = 4;
  uint32 container_port = 5;
}
message SandboxGetTunnelsResponse {
  GenericResult result = 1;
  repeated TunnelData tunnels = 2;
}
message SandboxGetFromNameRequest {
  string sandbox_name = 1;
  string environment_name = 2;
  string app_name = 3;
}
message SandboxGetFromNameResponse {
  string sandbox_id = 1;
}
`,
);

/** `modal.task_command_router`: exec in a running sandbox. */
export const ROUTER_PROTO: ProtoSchema = protoSchema(
  "modal.task_command_router",
  `
message TaskExecStartRequest {
  string task_id = 1;
  string exec_id = 2;
  repeated string command_args = 3;
  int32 stdout_config = 4;
  int32 stderr_config = 5;
  optional uint32 timeout_secs = 6;
  optional string workdir = 7;
  repeated string secret_ids = 8;
  bool runtime_debug = 10;
}
message TaskExecStdioReadRequest {
  string task_id = 1;
  string exec_id = 2;
  uint64 offset = 3;
  int32 file_descriptor = 4;
}
message TaskExecStdioReadResponse {
  bytes data = 1;
}
message TaskExecStdinWriteRequest {
  string task_id = 1;
  string exec_id = 2;
  uint64 offset = 3;
  bytes data = 4;
  bool eof = 5;
}
message TaskExecWaitRequest {
  string task_id = 1;
  string exec_id = 2;
}
message TaskExecWaitResponse {
  oneof exit_status {
    int32 code = 1;
    int32 signal = 2;
  }
}
message TaskExecStartResponse {}
message TaskExecStdinWriteResponse {}
`,
);

/** `GenericResult.GenericStatus` values the fake answers with. */
export const GenericStatus = {
  SUCCESS: 1,
  FAILURE: 2,
  TERMINATED: 3,
  TIMEOUT: 4,
  IDLE_TIMEOUT: 7,
} as const;

/** `ObjectCreationType` values the fake checks. */
export const ObjectCreationType = { CREATE_IF_MISSING: 1, EPHEMERAL: 5 } as const;

/** `TaskExecStdoutConfig` / `TaskExecStderrConfig` values. */
export const StdioConfig = { DEVNULL: 0, PIPE: 1, STDOUT: 2 } as const;

/** `TaskExecStdioFileDescriptor` values. */
export const StdioFd = { STDOUT: 0, STDERR: 1 } as const;
