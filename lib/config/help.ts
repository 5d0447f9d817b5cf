/**
 * Help text generated from zod schemas: one line per field with its flag, type,
 * default and description.
 *
 * @module
 */
import type { z } from "zod";
import { flagName } from "./provenance.ts";
import { fieldInfo, listLeaves, typeLabel } from "./schema_walk.ts";

/** One rendered field. */
export interface FieldHelp {
  flag: string;
  type: string;
  default: string | null;
  description: string;
}

function showDefault(info: ReturnType<typeof fieldInfo>): string | null {
  if (!info.hasDefault) return null;
  return JSON.stringify(info.defaultValue);
}

/** The fields under an object schema, as help rows. */
export function describeFields(schema: z.ZodType, prefix: string[] = []): FieldHelp[] {
  return listLeaves(schema, prefix).map((leaf) => {
    const info = fieldInfo(leaf.schema);
    return {
      flag: flagName(leaf.path),
      type: typeLabel(leaf.schema),
      default: showDefault(info),
      description: info.description ?? "",
    };
  });
}

/** Renders help rows as aligned text. */
export function renderFields(rows: FieldHelp[], indent = "  "): string {
  const w1 = Math.min(44, Math.max(...rows.map((r) => r.flag.length), 0));
  const w2 = Math.min(24, Math.max(...rows.map((r) => r.type.length), 0));
  return rows.map((r) => {
    // a description that states its default itself ("(default 0)") is not repeated
    const said = /\(default\b/i.test(r.description);
    const def = r.default !== null && !said ? ` (default: ${r.default})` : "";
    return `${indent}${r.flag.padEnd(w1)}  ${r.type.padEnd(w2)}  ${r.description}${def}`.trimEnd();
  }).join("\n");
}
