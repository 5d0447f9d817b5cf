/**
 * Small source trees on disk for the tests of the repository scripts that read a checkout
 * (scripts/check_layers.ts, scripts/import_graph.ts).
 *
 * @module
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** Writes `files` (path → source) under a fresh temporary directory; returns it. */
export function sourceTree(files: Record<string, string>, prefix = "vf-tree-"): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}
