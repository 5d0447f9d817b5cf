/**
 * The Prime gateway's `command_session` messages the fake serves, as `.proto` text read by
 * the test side's own codec (proto_schema.ts), independent of the runtime's
 * plugins/runtimes/prime/command_session_pb.ts. Names, numbers and types are those of the
 * Prime SDK's `_proto/command_session/command_session_pb2.py`@66fb4b70; nested upstream
 * messages are declared at the top level (`StartEvent` is `CommandSessionEvent.StartEvent`).
 *
 * @module
 */
import { protoSchema } from "./proto_schema.ts";
import type { Plain, ProtoSchema } from "./proto_schema.ts";

/** The `command_session` package. */
export const COMMAND_SESSION_PROTO: ProtoSchema = protoSchema(
  "command_session",
  `
message CommandSpec {
  string cmd = 1;
  repeated string args = 2;
  map<string, string> envs = 3;
  optional string cwd = 4;
}
message PtySize {
  uint32 cols = 1;
  uint32 rows = 2;
}
message PTY {
  PtySize size = 1;
}
message StartRequest {
  CommandSpec command = 1;
  optional PTY pty = 2;
  optional string tag = 3;
  optional bool stdin = 4;
}
message StartEvent {
  uint32 pid = 1;
}
message DataEvent {
  oneof output {
    bytes stdout = 1;
    bytes stderr = 2;
    bytes pty = 3;
  }
}
message EndEvent {
  sint32 exit_code = 1;
  bool exited = 2;
  string status = 3;
  optional string error = 4;
}
message KeepAlive {}
message CommandSessionEvent {
  oneof event {
    StartEvent start = 1;
    DataEvent data = 2;
    EndEvent end = 3;
    KeepAlive keepalive = 4;
  }
}
message StartResponse {
  CommandSessionEvent event = 1;
}
message CommandSessionSelector {
  oneof selector {
    uint32 pid = 1;
    string tag = 2;
  }
}
message CommandInput {
  oneof input {
    bytes stdin = 1;
    bytes pty = 2;
  }
}
message SendInputRequest {
  CommandSessionSelector session = 1;
  CommandInput input = 2;
}
message SendSignalRequest {
  CommandSessionSelector session = 1;
  int32 signal = 2;
}
`,
);

/** What a running command reports on its `Start` stream. */
export type SessionEvent =
  | { kind: "start"; pid: number }
  | { kind: "data"; stream: "stdout" | "stderr"; bytes: Uint8Array }
  | { kind: "end"; exitCode: number; exited: boolean; status: string; error?: string };

/** Encodes one event as a `StartResponse`. */
export function encodeSessionEvent(ev: SessionEvent): Uint8Array {
  const event: Plain = ev.kind === "start"
    ? { start: { pid: ev.pid } }
    : ev.kind === "data"
    ? { data: { [ev.stream]: ev.bytes } }
    : { end: { exitCode: ev.exitCode, exited: ev.exited, status: ev.status, error: ev.error } };
  return COMMAND_SESSION_PROTO.encode("StartResponse", { event });
}
