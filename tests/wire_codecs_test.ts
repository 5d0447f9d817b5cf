/**
 * The kit's wire codecs (kit/wire/envelope.ts, kit/wire/protobuf.ts) against independent
 * counterparts: envelopes against bytes written out by hand, cut at every offset; protobuf
 * messages against `@bufbuild/protobuf`'s reflection codec reading the same message from
 * `.proto` text (tests/fakes/proto_schema.ts), in both directions.
 */
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import {
  defineMessage,
  encodeEnvelope,
  EnvelopeReader,
  field,
  type MessageType,
} from "../kit/mod.ts";
import { protoSchema } from "./fakes/proto_schema.ts";

describe("5-byte envelopes", () => {
  const stream = new Uint8Array([
    ...[0x00, 0, 0, 0, 3, 0x61, 0x62, 0x63], // flags 0, "abc"
    ...[0x02, 0, 0, 0, 0], // flags 2 (Connect end-stream), empty
    ...[0x01, 0, 0, 1, 0, ...new Array(256).fill(7)], // flags 1, 256 bytes
  ]);

  it("frames a payload as flag byte, big-endian length, payload", () => {
    assert.deepEqual([...encodeEnvelope(0x02, new Uint8Array([9, 8]))], [2, 0, 0, 0, 2, 9, 8]);
    assert.deepEqual([...encodeEnvelope(0, new Uint8Array(0))], [0, 0, 0, 0, 0]);
    const big = encodeEnvelope(0, new Uint8Array(0x010203));
    assert.deepEqual([...big.subarray(0, 5)], [0, 0x00, 0x01, 0x02, 0x03]);
  });

  it("reads the same envelopes whatever the chunking (every split point, byte by byte)", () => {
    const expected = [
      { flags: 0, data: [0x61, 0x62, 0x63] },
      { flags: 2, data: [] },
      { flags: 1, data: new Array(256).fill(7) },
    ];
    const plain = (xs: { flags: number; data: Uint8Array }[]) =>
      xs.map((x) => ({ flags: x.flags, data: [...x.data] }));
    for (let cut = 0; cut <= stream.length; cut++) {
      const reader = new EnvelopeReader();
      const got = [...reader.push(stream.subarray(0, cut)), ...reader.push(stream.subarray(cut))];
      assert.deepEqual(plain(got), expected, `split at ${cut}`);
      assert.equal(reader.pending, 0);
    }
    const reader = new EnvelopeReader();
    const got = [];
    for (const byte of stream) got.push(...reader.push(new Uint8Array([byte])));
    assert.deepEqual(plain(got), expected);
  });

  it("counts an incomplete envelope as pending", () => {
    const reader = new EnvelopeReader();
    assert.deepEqual(reader.push(stream.subarray(0, 3)), []);
    assert.equal(reader.pending, 3);
    assert.deepEqual(reader.push(stream.subarray(3, 7)), []);
    assert.equal(reader.pending, 7);
  });

  it("shows each header once, before its payload arrives; a refusal stops the read", () => {
    const seen: [number, number][] = [];
    const reader = new EnvelopeReader({ onHeader: (flags, length) => seen.push([flags, length]) });
    for (const byte of stream) reader.push(new Uint8Array([byte]));
    assert.deepEqual(seen, [[0, 3], [2, 0], [1, 256]]);
    const strict = new EnvelopeReader({
      onHeader: (_flags, length) => {
        if (length > 100) throw new RangeError(`too large: ${length}`);
      },
    });
    assert.equal(strict.push(stream.subarray(0, 13)).length, 2);
    assert.throws(() => strict.push(stream.subarray(13, 18)), /too large: 256/);
  });
});

interface Inner {
  n: number;
}
const Inner: MessageType<Inner> = defineMessage<Inner>("Inner", [
  field.singular("n", 1, "sint32"),
]);
interface Sample {
  name: string;
  count: number;
  offset: number;
  ratio: number;
  flags: number[];
  tags: string[];
  labels: Record<string, string>;
  inner: Inner | undefined;
  items: Inner[];
  note: string | undefined;
  code: number | undefined;
  signal: number | undefined;
  blob: Uint8Array;
}
const Sample = defineMessage<Sample>("Sample", [
  field.singular("name", 1, "string"),
  field.singular("count", 2, "uint32"),
  field.singular("offset", 3, "uint64"),
  field.singular("ratio", 4, "float"),
  field.repeated("flags", 5, "int32"),
  field.repeated("tags", 6, "string"),
  field.map("labels", 7, "string"),
  field.optional("inner", 8, () => Inner),
  field.repeated("items", 9, () => Inner),
  field.optional("note", 10, "string"),
  field.oneof("exit", "code", 11, "int32"),
  field.oneof("exit", "signal", 12, "int32"),
  field.singular("blob", 13, "bytes"),
]);
const reference = protoSchema(
  "t",
  `
message Inner { sint32 n = 1; }
message Sample {
  string name = 1;
  uint32 count = 2;
  uint64 offset = 3;
  float ratio = 4;
  repeated int32 flags = 5;
  repeated string tags = 6;
  map<string, string> labels = 7;
  Inner inner = 8;
  repeated Inner items = 9;
  optional string note = 10;
  oneof exit {
    int32 code = 11;
    int32 signal = 12;
  }
  bytes blob = 13;
}
`,
);

const full: Sample = {
  name: "sandbox ✓",
  count: 4_000_000_000,
  offset: 2 ** 40 + 5,
  ratio: 0.5,
  flags: [0, -1, 300],
  tags: ["a", ""],
  labels: { K: "v", EMPTY: "" },
  inner: { n: -7 },
  items: [{ n: 1 }, { n: 0 }],
  note: "",
  code: 0,
  signal: undefined,
  blob: new Uint8Array([0, 255]),
};

describe("schema-driven protobuf messages", () => {
  it("writes what the reflection codec reads, and reads what it writes", () => {
    assert.deepEqual(reference.decode("Sample", Sample.encode(full)), full);
    assert.deepEqual(Sample.decode(reference.encode("Sample", { ...full })), full);
  });

  it("omits implicit-presence defaults and keeps set optionals and oneof members", () => {
    const empty = Sample.encode({ name: "", count: 0, flags: [], labels: {} });
    assert.equal(empty.byteLength, 0);
    const explicit = Sample.encode({ note: "", code: 0 });
    assert.deepEqual([...explicit], [0x52, 0x00, 0x58, 0x00]);
    assert.deepEqual(reference.decode("Sample", explicit).note, "");
    assert.deepEqual(reference.decode("Sample", explicit).code, 0);
  });

  it("keeps the last oneof member on the wire, as the reflection codec does", () => {
    const both = new Uint8Array([0x58, 0x01, 0x60, 0x09]); // code 1, then signal 9
    const ours = Sample.decode(both);
    const theirs = reference.decode("Sample", both);
    assert.deepEqual([ours.code, ours.signal], [undefined, 9]);
    assert.deepEqual([theirs.code, theirs.signal], [undefined, 9]);
  });

  it("skips unknown fields", () => {
    const bytes = new Uint8Array([0x0a, 0x01, 0x78, 0xa2, 0x06, 0x03, 0x61, 0x62, 0x63]); // field 100
    assert.equal(Sample.decode(bytes).name, "x");
  });
});
