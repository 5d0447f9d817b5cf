/**
 * The test side's protobuf: message schemas written as `.proto` text and run through
 * `@bufbuild/protobuf`'s reflection codec (`create`/`toBinary`/`fromBinary` over a file
 * registry), so the loopback fakes decode what a client sends and encode their answers with
 * nothing of the runtimes' own schema-driven codec (kit/wire/protobuf.ts): a field number or
 * type wrong in production shows up as a disagreement with the fake.
 *
 * The `.proto` subset understood: `message` blocks (not nested: a nested upstream message is
 * declared at the top level, which the wire cannot tell apart), fields with `optional` or
 * `repeated`, `map<string, T>`, `oneof` blocks, scalar and message types (enums as `int32`),
 * `//` comments.
 *
 * Messages cross the codec as plain objects: proto names in camelCase, unset messages and
 * optional fields `undefined`, a oneof as its member fields (the one set, the others
 * `undefined`), 64-bit integers as numbers.
 *
 * @module
 */
import { create, createFileRegistry, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { DescField, DescMessage, MessageInitShape } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { DescriptorProtoSchema, FieldDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";

type DescriptorProto = MessageInitShape<typeof DescriptorProtoSchema>;
type FieldDescriptorProto = MessageInitShape<typeof FieldDescriptorProtoSchema>;

/** `FieldDescriptorProto.Type` numbers of the scalar types the subset knows. */
const SCALAR_TYPES: Record<string, number> = {
  double: 1,
  float: 2,
  int64: 3,
  uint64: 4,
  int32: 5,
  bool: 8,
  string: 9,
  bytes: 12,
  uint32: 13,
  sint32: 17,
};
const TYPE_STRING = 9;
const TYPE_MESSAGE = 11;
const LABEL_OPTIONAL = 1;
const LABEL_REPEATED = 3;

/** A plain message value. */
export type Plain = Record<string, unknown>;

/** The messages of one `.proto` text, by name. */
export interface ProtoSchema {
  /** The reflection descriptor of a message (fields, numbers, nested types). */
  message(name: string): DescMessage;
  /** Decodes wire bytes into a plain object; throws on bytes that are not the message. */
  decode(name: string, bytes: Uint8Array): Plain;
  /** Encodes a plain object (missing fields take their defaults). */
  encode(name: string, value: Plain): Uint8Array;
}

/** Parses `.proto` text of package `pkg` into a {@link ProtoSchema}. */
export function protoSchema(pkg: string, text: string): ProtoSchema {
  const tokens = text.replace(/\/\/[^\n]*/g, "").match(/[A-Za-z_][\w.]*|\d+|[{}<>=;,]/g) ?? [];
  let at = 0;
  const next = (): string => {
    const t = tokens[at++];
    if (t === undefined) throw new Error("proto text ends early");
    return t;
  };
  const expect = (want: string) => {
    const got = next();
    if (got !== want) throw new Error(`proto text: expected "${want}", got "${got}"`);
  };
  const messages: DescriptorProto[] = [];
  while (at < tokens.length) {
    expect("message");
    messages.push(parseMessage(pkg, next(), next, expect));
  }
  const registry = createFileRegistry(
    create(FileDescriptorProtoSchema, {
      name: `${pkg}.proto`,
      package: pkg,
      syntax: "proto3",
      messageType: messages,
    }),
    () => undefined,
  );
  const message = (name: string): DescMessage => {
    const desc = registry.getMessage(`${pkg}.${name}`);
    if (desc === undefined) throw new Error(`the schema has no message ${name}`);
    return desc;
  };
  return {
    message,
    decode: (name, bytes) => toPlain(message(name), fromBinary(message(name), bytes)),
    encode: (name, value) => {
      const desc = message(name);
      return toBinary(desc, create(desc, fromPlain(desc, value)));
    },
  };
}

function parseMessage(
  pkg: string,
  name: string,
  next: () => string,
  expect: (t: string) => void,
): DescriptorProto {
  const fields: FieldDescriptorProto[] = [];
  const nestedType: DescriptorProto[] = [];
  const oneofs: string[] = [];
  const optionals: FieldDescriptorProto[] = [];
  const typeOf = (t: string) => {
    const scalar = SCALAR_TYPES[t];
    return scalar !== undefined
      ? { type: scalar }
      : { type: TYPE_MESSAGE, typeName: `.${pkg}.${t}` };
  };
  const fieldEnd = (): number => {
    expect("=");
    const no = Number(next());
    expect(";");
    return no;
  };
  expect("{");
  let oneof: number | null = null;
  for (let t = next(); t !== "}" || oneof !== null; t = next()) {
    if (t === "}") {
      oneof = null;
    } else if (t === "oneof") {
      oneof = oneofs.push(next()) - 1;
      expect("{");
    } else if (t === "map") {
      expect("<");
      expect("string");
      expect(",");
      const value = next();
      expect(">");
      const fieldName = next();
      const entry = `${pascal(fieldName)}Entry`;
      nestedType.push({
        name: entry,
        field: [
          { name: "key", number: 1, label: LABEL_OPTIONAL, type: TYPE_STRING },
          { name: "value", number: 2, label: LABEL_OPTIONAL, ...typeOf(value) },
        ],
        options: { mapEntry: true },
      });
      fields.push({
        name: fieldName,
        number: fieldEnd(),
        label: LABEL_REPEATED,
        type: TYPE_MESSAGE,
        typeName: `.${pkg}.${name}.${entry}`,
      });
    } else {
      const label = t === "optional" || t === "repeated" ? t : null;
      const type = label === null ? t : next();
      const field: FieldDescriptorProto = {
        name: next(),
        label: label === "repeated" ? LABEL_REPEATED : LABEL_OPTIONAL,
        ...typeOf(type),
      };
      field.number = fieldEnd();
      if (oneof !== null) field.oneofIndex = oneof;
      if (label === "optional") optionals.push(field);
      fields.push(field);
    }
  }
  // proto3 `optional`: one synthetic oneof per field, after the real ones (as protoc does).
  for (const field of optionals) {
    field.proto3Optional = true;
    field.oneofIndex = oneofs.push(`_${field.name}`) - 1;
  }
  return {
    name,
    field: fields,
    nestedType,
    oneofDecl: oneofs.map((n) => ({ name: n })),
  };
}

function pascal(snake: string): string {
  return snake.split("_").map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join("");
}

function plainScalar(v: unknown): unknown {
  return typeof v === "bigint" ? Number(v) : v;
}

function plainValue(field: DescField, v: unknown): unknown {
  switch (field.fieldKind) {
    case "message":
      return v === undefined ? undefined : toPlain(field.message, v as Plain);
    case "list":
      return (v as unknown[]).map((x) =>
        field.listKind === "message" ? toPlain(field.message, x as Plain) : plainScalar(x)
      );
    case "map":
      return Object.fromEntries(
        Object.entries(v as Plain).map(([k, x]) => [
          k,
          field.mapKind === "message" ? toPlain(field.message, x as Plain) : plainScalar(x),
        ]),
      );
    default:
      return plainScalar(v);
  }
}

function toPlain(desc: DescMessage, message: Plain): Plain {
  const out: Plain = {};
  for (const field of desc.fields) {
    let v = message[field.localName];
    if (field.oneof !== undefined) {
      const chosen = message[field.oneof.localName] as { case?: string; value?: unknown };
      v = chosen.case === field.localName ? chosen.value : undefined;
    }
    out[field.localName] = plainValue(field, v);
  }
  return out;
}

function fromPlain(desc: DescMessage, value: Plain): Plain {
  const init: Plain = {};
  for (const field of desc.fields) {
    let v = value[field.localName];
    if (v === undefined || v === null) continue;
    if (field.fieldKind === "message") v = fromPlain(field.message, v as Plain);
    if (field.fieldKind === "list" && field.listKind === "message") {
      v = (v as Plain[]).map((x) => fromPlain(field.message, x));
    }
    if (field.oneof !== undefined) {
      init[field.oneof.localName] = { case: field.localName, value: v };
    } else init[field.localName] = v;
  }
  return init;
}
