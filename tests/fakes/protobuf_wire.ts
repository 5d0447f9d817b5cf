/**
 * Schema-guided wire inspection for recorded protobuf requests: which field numbers a
 * message carried on the wire (nested messages followed where the schema knows them), so
 * two clients' requests can be compared field by field, including fields the fake's schema
 * does not declare (reported as `?<number>`).
 *
 * @module
 */
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import type { DescMessage } from "@bufbuild/protobuf";

/**
 * The dotted field paths present on the wire, sorted and deduplicated, e.g.
 * `["1", "2", "2.5", "2.5.3"]`. A field absent from `type` is listed as `?<n>` with its
 * wire type (`?31/2`) and not descended into.
 */
export function wirePaths(bytes: Uint8Array, type?: DescMessage): string[] {
  const out = new Set<string>();
  walk(bytes, type, "", out);
  return [...out].sort(comparePaths);
}

function walk(
  bytes: Uint8Array,
  type: DescMessage | undefined,
  prefix: string,
  out: Set<string>,
): void {
  const r = new BinaryReader(bytes);
  while (r.pos < r.len) {
    const [no, wt] = r.tag();
    const field = type?.fields.find((f) => f.number === no);
    if (field === undefined) {
      out.add(`${prefix}?${no}/${wt}`);
      r.skip(wt, no);
      continue;
    }
    const path = `${prefix}${no}`;
    out.add(path);
    const sub =
      field.fieldKind === "message" || field.fieldKind === "list" && field.listKind === "message"
        ? field.message
        : undefined;
    if (sub !== undefined && wt === WireType.LengthDelimited) {
      walk(r.bytes(), sub, `${path}.`, out);
    } else {
      r.skip(wt, no);
    }
  }
}

function comparePaths(a: string, b: string): number {
  const pa = a.split(".");
  const pb = b.split(".");
  for (let i = 0; i < Math.min(pa.length, pb.length); i++) {
    const x = pa[i]!;
    const y = pb[i]!;
    if (x === y) continue;
    const nx = Number(x.replace(/^\?/, "").split("/")[0]);
    const ny = Number(y.replace(/^\?/, "").split("/")[0]);
    return nx - ny || x.localeCompare(y);
  }
  return pa.length - pb.length;
}
