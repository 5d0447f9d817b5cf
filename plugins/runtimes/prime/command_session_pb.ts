/**
 * Protobuf messages of the Prime gateway's `command_session.CommandSession` service
 * (`_proto/command_session`, `rpc_command_session.py`@66fb4b70 of the Prime SDK), declared
 * with the kit's protobuf codec (kit/wire/protobuf.ts, as the Modal runtime's messages).
 * Only the messages the client sends or reads are declared; unknown fields are skipped when
 * decoding. The client works with the small shapes below ({@link CommandSessionEvent},
 * {@link SessionSelector}), mapped to and from the wire messages here.
 *
 * @module
 */
import { defineMessage, field, type MessageType } from "../../../kit/mod.ts";

/** `CommandSpec`: what to run. */
export interface CommandSpec {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd?: string;
}

/** `StartRequest`. */
export interface StartRequest {
  command: CommandSpec;
  tag?: string;
  stdin?: boolean;
}

/** One `CommandSessionEvent` (the `event` of a `StartResponse`). */
export type CommandSessionEvent =
  | { kind: "start"; pid: number }
  | { kind: "data"; stream: "stdout" | "stderr" | "pty"; bytes: Uint8Array }
  | { kind: "end"; exitCode: number; exited: boolean; status: string; error?: string }
  | { kind: "keepalive" };

/** Selects a session: by pid or by tag. */
export type SessionSelector = { pid: number } | { tag: string };

/** `SendSignalRequest`. */
export interface SendSignalRequest {
  session: SessionSelector;
  /** A `Signal` enum value: 15 SIGTERM, 9 SIGKILL (0 unspecified). */
  signal: number;
}

interface SpecWire {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd: string | undefined;
}
const CommandSpecWire: MessageType<SpecWire> = defineMessage<SpecWire>("CommandSpec", [
  field.singular("cmd", 1, "string"),
  field.repeated("args", 2, "string"),
  field.map("envs", 3, "string"),
  field.optional("cwd", 4, "string"),
]);

interface StartRequestWire {
  command: SpecWire | undefined;
  tag: string | undefined;
  stdin: boolean | undefined;
}
const StartRequestWire = defineMessage<StartRequestWire>("StartRequest", [
  field.optional("command", 1, () => CommandSpecWire),
  field.optional("tag", 3, "string"),
  field.optional("stdin", 4, "bool"),
]);

interface EndEventWire {
  exitCode: number;
  exited: boolean;
  status: string;
  error: string | undefined;
}
interface DataEventWire {
  stdout: Uint8Array | undefined;
  stderr: Uint8Array | undefined;
  pty: Uint8Array | undefined;
}
interface EventWire {
  start: { pid: number } | undefined;
  data: DataEventWire | undefined;
  end: EndEventWire | undefined;
  keepalive: Record<string, never> | undefined;
}
const StartEventWire: MessageType<{ pid: number }> = defineMessage<{ pid: number }>(
  "CommandSessionEvent.StartEvent",
  [field.singular("pid", 1, "uint32")],
);
const DataEventWire: MessageType<DataEventWire> = defineMessage<DataEventWire>(
  "CommandSessionEvent.DataEvent",
  [
    field.oneof("output", "stdout", 1, "bytes"),
    field.oneof("output", "stderr", 2, "bytes"),
    field.oneof("output", "pty", 3, "bytes"),
  ],
);
const EndEventWire: MessageType<EndEventWire> = defineMessage<EndEventWire>(
  "CommandSessionEvent.EndEvent",
  [
    field.singular("exitCode", 1, "sint32"),
    field.singular("exited", 2, "bool"),
    field.singular("status", 3, "string"),
    field.optional("error", 4, "string"),
  ],
);
const KeepAliveWire: MessageType<Record<string, never>> = defineMessage<Record<string, never>>(
  "CommandSessionEvent.KeepAlive",
  [],
);
const EventWire: MessageType<EventWire> = defineMessage<EventWire>("CommandSessionEvent", [
  field.oneof("event", "start", 1, () => StartEventWire),
  field.oneof("event", "data", 2, () => DataEventWire),
  field.oneof("event", "end", 3, () => EndEventWire),
  field.oneof("event", "keepalive", 4, () => KeepAliveWire),
]);
const StartResponseWire = defineMessage<{ event: EventWire | undefined }>("StartResponse", [
  field.optional("event", 1, () => EventWire),
]);

interface SelectorWire {
  pid: number | undefined;
  tag: string | undefined;
}
const SelectorWire: MessageType<SelectorWire> = defineMessage<SelectorWire>(
  "CommandSessionSelector",
  [field.oneof("selector", "pid", 1, "uint32"), field.oneof("selector", "tag", 2, "string")],
);
const SendSignalRequestWire = defineMessage<{ session: SelectorWire; signal: number }>(
  "SendSignalRequest",
  [field.optional("session", 1, () => SelectorWire), field.singular("signal", 2, "int32")],
);

/** Encodes a `StartRequest`. */
export function encodeStartRequest(req: StartRequest): Uint8Array {
  return StartRequestWire.encode({
    command: { ...req.command, cwd: req.command.cwd },
    tag: req.tag,
    stdin: req.stdin,
  });
}

/** Decodes a `StartResponse`; null when it carries no event this client knows. */
export function decodeStartResponse(bytes: Uint8Array): CommandSessionEvent | null {
  const ev = StartResponseWire.decode(bytes).event;
  if (ev === undefined) return null;
  if (ev.start) return { kind: "start", pid: ev.start.pid };
  if (ev.data) {
    const { stdout, stderr, pty } = ev.data;
    if (stderr) return { kind: "data", stream: "stderr", bytes: stderr };
    if (pty) return { kind: "data", stream: "pty", bytes: pty };
    return { kind: "data", stream: "stdout", bytes: stdout ?? new Uint8Array() };
  }
  if (ev.end) {
    const { exitCode, exited, status, error } = ev.end;
    return { kind: "end", exitCode, exited, status, ...(error === undefined ? {} : { error }) };
  }
  if (ev.keepalive) return { kind: "keepalive" };
  return null;
}

/** Encodes a `SendSignalRequest`. */
export function encodeSendSignalRequest(req: SendSignalRequest): Uint8Array {
  const session = "pid" in req.session
    ? { pid: req.session.pid, tag: undefined }
    : { pid: undefined, tag: req.session.tag };
  return SendSignalRequestWire.encode({ session, signal: req.signal });
}
