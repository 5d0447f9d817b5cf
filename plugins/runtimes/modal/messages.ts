/**
 * The Modal protobuf messages the runtime uses (packages `modal.client` and
 * `modal.task_command_router`, declared in ./proto/ with the kit's protobuf codec), their
 * enum values and the gRPC service paths, under one import.
 *
 * @module
 */
export * from "./proto/control.ts";
export * from "./proto/image.ts";
export * from "./proto/sandbox.ts";
export * from "./proto/router.ts";

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

/** gRPC paths of the control-plane service. */
export const CONTROL_SERVICE = "/modal.client.ModalClient/";
/** gRPC paths of the task command router service. */
export const ROUTER_SERVICE = "/modal.task_command_router.TaskCommandRouter/";
