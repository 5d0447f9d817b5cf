/**
 * Protobuf messages of the Prime gateway's `command_session.CommandSession` service
 * (`_proto/command_session`, `rpc_command_session.py`@66fb4b70 of the Prime SDK), encoded and decoded with the `@bufbuild/protobuf` wire codec. Unknown
 * fields are skipped when decoding.
 *
 * @module
 */
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

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

/** `SendInputRequest`. */
export interface SendInputRequest {
  session: SessionSelector;
  input: { stdin: Uint8Array } | { pty: Uint8Array };
}

/** `Signal` enum values. */
export const SIGNAL = { UNSPECIFIED: 0, SIGTERM: 15, SIGKILL: 9 } as const;

/** `SendSignalRequest`. */
export interface SendSignalRequest {
  session: SessionSelector;
  signal: number;
}

function writeSpec(w: BinaryWriter, spec: CommandSpec): void {
  w.tag(1, WireType.LengthDelimited).string(spec.cmd);
  for (const a of spec.args) w.tag(2, WireType.LengthDelimited).string(a);
  for (const [k, v] of Object.entries(spec.envs)) {
    w.tag(3, WireType.LengthDelimited).fork();
    w.tag(1, WireType.LengthDelimited).string(k);
    w.tag(2, WireType.LengthDelimited).string(v);
    w.join();
  }
  if (spec.cwd !== undefined) w.tag(4, WireType.LengthDelimited).string(spec.cwd);
}

/** Encodes a `StartRequest`. */
export function encodeStartRequest(req: StartRequest): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).fork();
  writeSpec(w, req.command);
  w.join();
  if (req.tag !== undefined) w.tag(3, WireType.LengthDelimited).string(req.tag);
  if (req.stdin !== undefined) w.tag(4, WireType.Varint).bool(req.stdin);
  return w.finish();
}

function readSpec(bytes: Uint8Array): CommandSpec {
  const r = new BinaryReader(bytes);
  const spec: CommandSpec = { cmd: "", args: [], envs: {} };
  while (r.pos < r.len) {
    const [field, wt] = r.tag();
    if (field === 1 && wt === WireType.LengthDelimited) spec.cmd = r.string();
    else if (field === 2 && wt === WireType.LengthDelimited) spec.args.push(r.string());
    else if (field === 3 && wt === WireType.LengthDelimited) {
      const e = new BinaryReader(r.bytes());
      let k = "";
      let v = "";
      while (e.pos < e.len) {
        const [f, t] = e.tag();
        if (f === 1 && t === WireType.LengthDelimited) k = e.string();
        else if (f === 2 && t === WireType.LengthDelimited) v = e.string();
        else e.skip(t, f);
      }
      spec.envs[k] = v;
    } else if (field === 4 && wt === WireType.LengthDelimited) spec.cwd = r.string();
    else r.skip(wt, field);
  }
  return spec;
}

/** Decodes a `StartRequest`. */
export function decodeStartRequest(bytes: Uint8Array): StartRequest {
  const r = new BinaryReader(bytes);
  const req: StartRequest = { command: { cmd: "", args: [], envs: {} } };
  while (r.pos < r.len) {
    const [field, wt] = r.tag();
    if (field === 1 && wt === WireType.LengthDelimited) req.command = readSpec(r.bytes());
    else if (field === 3 && wt === WireType.LengthDelimited) req.tag = r.string();
    else if (field === 4 && wt === WireType.Varint) req.stdin = r.bool();
    else r.skip(wt, field);
  }
  return req;
}

/** Encodes a `StartResponse` carrying one event. */
export function encodeStartResponse(ev: CommandSessionEvent): Uint8Array {
  const w = new BinaryWriter();
  w.tag(1, WireType.LengthDelimited).fork(); // event
  switch (ev.kind) {
    case "start":
      w.tag(1, WireType.LengthDelimited).fork();
      if (ev.pid !== 0) w.tag(1, WireType.Varint).uint32(ev.pid);
      w.join();
      break;
    case "data": {
      const field = ev.stream === "stdout" ? 1 : ev.stream === "stderr" ? 2 : 3;
      w.tag(2, WireType.LengthDelimited).fork();
      w.tag(field, WireType.LengthDelimited).bytes(ev.bytes);
      w.join();
      break;
    }
    case "end":
      w.tag(3, WireType.LengthDelimited).fork();
      if (ev.exitCode !== 0) w.tag(1, WireType.Varint).sint32(ev.exitCode);
      if (ev.exited) w.tag(2, WireType.Varint).bool(true);
      if (ev.status !== "") w.tag(3, WireType.LengthDelimited).string(ev.status);
      if (ev.error !== undefined) w.tag(4, WireType.LengthDelimited).string(ev.error);
      w.join();
      break;
    case "keepalive":
      w.tag(4, WireType.LengthDelimited).fork().join();
      break;
  }
  w.join();
  return w.finish();
}

function decodeEvent(bytes: Uint8Array): CommandSessionEvent | null {
  const r = new BinaryReader(bytes);
  let ev: CommandSessionEvent | null = null;
  while (r.pos < r.len) {
    const [field, wt] = r.tag();
    if (wt !== WireType.LengthDelimited || field < 1 || field > 4) {
      r.skip(wt, field);
      continue;
    }
    const inner = new BinaryReader(r.bytes());
    if (field === 1) {
      let pid = 0;
      while (inner.pos < inner.len) {
        const [f, t] = inner.tag();
        if (f === 1 && t === WireType.Varint) pid = inner.uint32();
        else inner.skip(t, f);
      }
      ev = { kind: "start", pid };
    } else if (field === 2) {
      let out: CommandSessionEvent = { kind: "data", stream: "stdout", bytes: new Uint8Array() };
      while (inner.pos < inner.len) {
        const [f, t] = inner.tag();
        if (t === WireType.LengthDelimited && f >= 1 && f <= 3) {
          const stream = f === 1 ? "stdout" : f === 2 ? "stderr" : "pty";
          out = { kind: "data", stream, bytes: inner.bytes().slice() };
        } else inner.skip(t, f);
      }
      ev = out;
    } else if (field === 3) {
      const end: CommandSessionEvent = { kind: "end", exitCode: 0, exited: false, status: "" };
      while (inner.pos < inner.len) {
        const [f, t] = inner.tag();
        if (f === 1 && t === WireType.Varint) end.exitCode = inner.sint32();
        else if (f === 2 && t === WireType.Varint) end.exited = inner.bool();
        else if (f === 3 && t === WireType.LengthDelimited) end.status = inner.string();
        else if (f === 4 && t === WireType.LengthDelimited) end.error = inner.string();
        else inner.skip(t, f);
      }
      ev = end;
    } else {
      ev = { kind: "keepalive" };
    }
  }
  return ev;
}

/** Decodes a `StartResponse`; null when it carries no event this client knows. */
export function decodeStartResponse(bytes: Uint8Array): CommandSessionEvent | null {
  const r = new BinaryReader(bytes);
  let ev: CommandSessionEvent | null = null;
  while (r.pos < r.len) {
    const [field, wt] = r.tag();
    if (field === 1 && wt === WireType.LengthDelimited) ev = decodeEvent(r.bytes());
    else r.skip(wt, field);
  }
  return ev;
}

function writeSelector(w: BinaryWriter, s: SessionSelector): void {
  w.tag(1, WireType.LengthDelimited).fork();
  if ("pid" in s) w.tag(1, WireType.Varint).uint32(s.pid);
  else w.tag(2, WireType.LengthDelimited).string(s.tag);
  w.join();
}

function readSelector(bytes: Uint8Array): SessionSelector {
  const r = new BinaryReader(bytes);
  let s: SessionSelector = { pid: 0 };
  while (r.pos < r.len) {
    const [f, t] = r.tag();
    if (f === 1 && t === WireType.Varint) s = { pid: r.uint32() };
    else if (f === 2 && t === WireType.LengthDelimited) s = { tag: r.string() };
    else r.skip(t, f);
  }
  return s;
}

/** Encodes a `SendInputRequest`. */
export function encodeSendInputRequest(req: SendInputRequest): Uint8Array {
  const w = new BinaryWriter();
  writeSelector(w, req.session);
  w.tag(2, WireType.LengthDelimited).fork();
  if ("stdin" in req.input) w.tag(1, WireType.LengthDelimited).bytes(req.input.stdin);
  else w.tag(2, WireType.LengthDelimited).bytes(req.input.pty);
  w.join();
  return w.finish();
}

/** Decodes a `SendInputRequest`. */
export function decodeSendInputRequest(bytes: Uint8Array): SendInputRequest {
  const r = new BinaryReader(bytes);
  const req: SendInputRequest = { session: { pid: 0 }, input: { stdin: new Uint8Array() } };
  while (r.pos < r.len) {
    const [field, wt] = r.tag();
    if (field === 1 && wt === WireType.LengthDelimited) req.session = readSelector(r.bytes());
    else if (field === 2 && wt === WireType.LengthDelimited) {
      const inner = new BinaryReader(r.bytes());
      while (inner.pos < inner.len) {
        const [f, t] = inner.tag();
        if (f === 1 && t === WireType.LengthDelimited) req.input = { stdin: inner.bytes().slice() };
        else if (f === 2 && t === WireType.LengthDelimited) {
          req.input = { pty: inner.bytes().slice() };
        } else inner.skip(t, f);
      }
    } else r.skip(wt, field);
  }
  return req;
}

/** Encodes a `SendSignalRequest`. */
export function encodeSendSignalRequest(req: SendSignalRequest): Uint8Array {
  const w = new BinaryWriter();
  writeSelector(w, req.session);
  if (req.signal !== 0) w.tag(2, WireType.Varint).int32(req.signal);
  return w.finish();
}

/** Decodes a `SendSignalRequest`. */
export function decodeSendSignalRequest(bytes: Uint8Array): SendSignalRequest {
  const r = new BinaryReader(bytes);
  const req: SendSignalRequest = { session: { pid: 0 }, signal: 0 };
  while (r.pos < r.len) {
    const [field, wt] = r.tag();
    if (field === 1 && wt === WireType.LengthDelimited) req.session = readSelector(r.bytes());
    else if (field === 2 && wt === WireType.Varint) req.signal = r.int32();
    else r.skip(wt, field);
  }
  return req;
}
