/**
 * Modal task command router messages (`modal.task_command_router`): exec, stdin, stdout/stderr, wait. Field numbers are those of the official SDK's generated protobuf code
 * (`modal@0.7.2`); names are the proto names in camelCase. Only the fields verifiers-ts reads
 * or writes are declared; others are skipped on decode.
 *
 * @module
 */
import { defineMessage, field } from "../../../../kit/mod.ts";

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
  field.singular("taskId", 1, "string"),
  field.singular("execId", 2, "string"),
  field.repeated("commandArgs", 3, "string"),
  field.singular("stdoutConfig", 4, "int32"),
  field.singular("stderrConfig", 5, "int32"),
  field.optional("timeoutSecs", 6, "uint32"),
  field.optional("workdir", 7, "string"),
  field.repeated("secretIds", 8, "string"),
  field.singular("runtimeDebug", 10, "bool"),
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
    field.singular("taskId", 1, "string"),
    field.singular("execId", 2, "string"),
    field.singular("offset", 3, "uint64"),
    field.singular("fileDescriptor", 4, "int32"),
  ],
);

/** `TaskExecStdioReadResponse`. */
export interface TaskExecStdioReadResponse {
  data: Uint8Array;
}

/** `TaskExecStdioReadResponse`. */
export const TaskExecStdioReadResponse = defineMessage<TaskExecStdioReadResponse>(
  "TaskExecStdioReadResponse",
  [field.singular("data", 1, "bytes")],
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
    field.singular("taskId", 1, "string"),
    field.singular("execId", 2, "string"),
    field.singular("offset", 3, "uint64"),
    field.singular("data", 4, "bytes"),
    field.singular("eof", 5, "bool"),
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
  field.singular("taskId", 1, "string"),
  field.singular("execId", 2, "string"),
]);

/** `TaskExecWaitResponse` (also `TaskExecPollResponse`): oneof exit_status. */
export interface TaskExecWaitResponse {
  code: number | undefined;
  signal: number | undefined;
}

/** `TaskExecWaitResponse`. */
export const TaskExecWaitResponse = defineMessage<TaskExecWaitResponse>("TaskExecWaitResponse", [
  field.oneof("exitStatus", "code", 1, "int32"),
  field.oneof("exitStatus", "signal", 2, "int32"),
]);
