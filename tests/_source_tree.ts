/**
 * File trees on disk for tests: a small source tree written for the repository scripts that
 * read a checkout (scripts/check_layers.ts, scripts/import_graph.ts), and the files under a
 * directory a run wrote (checked for leaked secrets).
 *
 * @module
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from "node:fs";
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

/** Every file under `dir`, recursively (none when it does not exist). */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}
