/**
 * A small schema-driven protobuf codec (proto3) over `@bufbuild/protobuf`'s wire reader and
 * writer, for plugins that speak a handful of messages of a service (the Modal runtime's
 * plugins/runtimes/modal/messages.ts, the Prime runtime's
 * plugins/runtimes/prime/command_session_pb.ts). A message type is a list of fields (name,
 * number, type, label); {@link MessageType.encode} omits proto3 defaults (implicit
 * presence), sends `optional` fields and oneof members whenever they are set, and
 * {@link MessageType.decode} skips unknown fields; of a oneof's members the last one on
 * the wire wins.
 *
 * ```ts
 * interface Ping { id: string; tags: string[] }
 * const Ping = defineMessage<Ping>("Ping", [
 *   field.singular("id", 1, "string"),
 *   field.repeated("tags", 2, "string"),
 * ]);
 * Ping.decode(Ping.encode({ id: "a" })); // { id: "a", tags: [] }
 * ```
 *
 * @module
 */
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

/** Scalar field types (enums are `int32`). */
export type ScalarKind =
  | "string"
  | "bytes"
  | "bool"
  | "int32"
  | "uint32"
  | "uint64"
  | "sint32"
  | "float"
  | "double";

/** How often a field occurs: proto3 implicit presence, `optional`, `repeated`, or a map. */
export type FieldLabel = "singular" | "optional" | "repeated" | "map";

/** One field of a message type. Message-typed fields refer to their type lazily. */
export interface FieldSpec {
  name: string;
  no: number;
  type: ScalarKind | (() => MessageType<object>);
  label: FieldLabel;
  /** Map value type (keys are strings). */
  mapValue?: ScalarKind;
  /** The oneof this (explicit-presence) field belongs to: setting it clears the others. */
  oneof?: string;
}

/** A message type: its fields and its codec. */
export interface MessageType<T extends object> {
  readonly typeName: string;
  readonly fields: readonly FieldSpec[];
  /** Encodes a (partial) message; unset fields take their default and are omitted. */
  encode(value: Partial<T>): Uint8Array;
  /** Decodes bytes; unknown fields are skipped, missing ones get their default. */
  decode(bytes: Uint8Array): T;
}

/** A field constructor: a field's name in the decoded object, its number, its type. */
export type FieldConstructor = (name: string, no: number, type: FieldSpec["type"]) => FieldSpec;

/** The field constructors of {@link field}. */
export interface FieldConstructors {
  /** A proto3 field with implicit presence (omitted on the wire when it holds its default). */
  singular: FieldConstructor;
  /** An `optional` field, or a message-typed one (explicit presence: sent whenever set). */
  optional: FieldConstructor;
  /** A member of the oneof `group` (explicit presence; decoding one clears the others). */
  oneof: (group: string, ...field: Parameters<FieldConstructor>) => FieldSpec;
  /** A `repeated` field (scalars other than strings and bytes are packed). */
  repeated: FieldConstructor;
  /** A `map<string, V>` field. */
  map: (name: string, no: number, mapValue: ScalarKind) => FieldSpec;
}

const labelled = (label: FieldLabel): FieldConstructor => (name, no, type) => ({
  name,
  no,
  type,
  label,
});

/** Field constructors for {@link defineMessage}. */
export const field: FieldConstructors = {
  singular: labelled("singular"),
  optional: labelled("optional"),
  oneof: (group, ...spec) => ({ ...labelled("optional")(...spec), oneof: group }),
  repeated: labelled("repeated"),
  map: (name, no, mapValue) => ({ name, no, type: "string", label: "map", mapValue }),
};

const utf8 = new TextDecoder("utf-8", { fatal: false });

function wireTypeOf(kind: ScalarKind): WireType {
  switch (kind) {
    case "string":
    case "bytes":
      return WireType.LengthDelimited;
    case "float":
      return WireType.Bit32;
    case "double":
      return WireType.Bit64;
    default:
      return WireType.Varint;
  }
}

function scalarDefault(kind: ScalarKind): unknown {
  switch (kind) {
    case "string":
      return "";
    case "bytes":
      return new Uint8Array(0);
    case "bool":
      return false;
    default:
      return 0;
  }
}

function isDefault(kind: ScalarKind, v: unknown): boolean {
  if (kind === "bytes") return (v as Uint8Array).byteLength === 0;
  return v === scalarDefault(kind);
}

/** Writes a scalar: every {@link ScalarKind} is the name of its `BinaryWriter` method. */
function writeScalar(w: BinaryWriter, kind: ScalarKind, v: unknown): void {
  (w[kind] as (value: unknown) => BinaryWriter).call(w, v);
}

function readScalar(r: BinaryReader, kind: ScalarKind): unknown {
  switch (kind) {
    case "string":
      return utf8.decode(r.bytes());
    case "bytes":
      return r.bytes().slice();
    case "bool":
      return r.bool();
    case "int32":
      return r.int32();
    case "uint32":
      return r.uint32();
    case "uint64":
      return Number(r.uint64());
    case "sint32":
      return r.sint32();
    case "float":
      return r.float();
    case "double":
      return r.double();
  }
}

function encodeInto(w: BinaryWriter, fields: readonly FieldSpec[], value: object): void {
  const v = value as Record<string, unknown>;
  for (const field of fields) {
    const x = v[field.name];
    if (x === undefined || x === null) continue;
    if (field.label === "map") {
      for (const [key, val] of Object.entries(x as Record<string, unknown>)) {
        w.tag(field.no, WireType.LengthDelimited).fork();
        w.tag(1, WireType.LengthDelimited).string(key);
        w.tag(2, wireTypeOf(field.mapValue!));
        writeScalar(w, field.mapValue!, val);
        w.join();
      }
      continue;
    }
    const items = field.label === "repeated" ? x as unknown[] : [x];
    if (typeof field.type === "function") {
      const sub = field.type();
      for (const item of items) {
        w.tag(field.no, WireType.LengthDelimited).fork();
        encodeInto(w, sub.fields, item as object);
        w.join();
      }
      continue;
    }
    const kind = field.type;
    if (field.label === "singular" && isDefault(kind, x)) continue;
    if (field.label === "repeated" && wireTypeOf(kind) !== WireType.LengthDelimited) {
      if (items.length === 0) continue;
      w.tag(field.no, WireType.LengthDelimited).fork();
      for (const item of items) writeScalar(w, kind, item);
      w.join();
      continue;
    }
    for (const item of items) {
      w.tag(field.no, wireTypeOf(kind));
      writeScalar(w, kind, item);
    }
  }
}

function defaults(fields: readonly FieldSpec[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.label === "repeated") out[field.name] = [];
    else if (field.label === "map") out[field.name] = {};
    else if (field.label === "singular" && typeof field.type !== "function") {
      out[field.name] = scalarDefault(field.type);
    } else out[field.name] = undefined;
  }
  return out;
}

function decodeFrom(r: BinaryReader, end: number, fields: readonly FieldSpec[]): object {
  const out = defaults(fields);
  const byNo = new Map(fields.map((x) => [x.no, x]));
  while (r.pos < end) {
    const [no, wt] = r.tag();
    const field = byNo.get(no);
    if (field === undefined) {
      r.skip(wt, no);
      continue;
    }
    if (field.label === "map") {
      const len = r.uint32();
      const stop = r.pos + len;
      let key = "";
      let val: unknown = scalarDefault(field.mapValue!);
      while (r.pos < stop) {
        const [kno, kwt] = r.tag();
        if (kno === 1 && kwt === WireType.LengthDelimited) key = readScalar(r, "string") as string;
        else if (kno === 2 && kwt === wireTypeOf(field.mapValue!)) {
          val = readScalar(r, field.mapValue!);
        } else r.skip(kwt, kno);
      }
      (out[field.name] as Record<string, unknown>)[key] = val;
      continue;
    }
    if (typeof field.type === "function") {
      if (wt !== WireType.LengthDelimited) {
        r.skip(wt, no);
        continue;
      }
      const sub = field.type();
      const len = r.uint32();
      const value = decodeFrom(r, r.pos + len, sub.fields);
      if (field.label === "repeated") (out[field.name] as unknown[]).push(value);
      else setSingle(out, fields, field, value);
      continue;
    }
    const kind = field.type;
    const expected = wireTypeOf(kind);
    if (
      field.label === "repeated" && wt === WireType.LengthDelimited &&
      expected !== WireType.LengthDelimited
    ) {
      const len = r.uint32();
      const stop = r.pos + len;
      while (r.pos < stop) (out[field.name] as unknown[]).push(readScalar(r, kind));
      continue;
    }
    if (wt !== expected) {
      r.skip(wt, no);
      continue;
    }
    const value = readScalar(r, kind);
    if (field.label === "repeated") (out[field.name] as unknown[]).push(value);
    else setSingle(out, fields, field, value);
  }
  return out;
}

/** Sets a singular field; a oneof member clears the other members of its oneof. */
function setSingle(
  out: Record<string, unknown>,
  fields: readonly FieldSpec[],
  field: FieldSpec,
  value: unknown,
): void {
  if (field.oneof !== undefined) {
    for (const other of fields) {
      if (other.oneof === field.oneof) out[other.name] = undefined;
    }
  }
  out[field.name] = value;
}

/** Declares a message type with its fields. `T` is the decoded shape (declared by hand). */
export function defineMessage<T extends object>(
  typeName: string,
  fields: FieldSpec[],
): MessageType<T> {
  return {
    typeName,
    fields,
    encode(value: Partial<T>): Uint8Array {
      const w = new BinaryWriter();
      encodeInto(w, fields, value);
      return w.finish();
    },
    decode(bytes: Uint8Array): T {
      const r = new BinaryReader(bytes);
      return decodeFrom(r, r.len, fields) as T;
    },
  };
}
