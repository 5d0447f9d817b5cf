/**
 * Writing a file so that a reader sees the old bytes or the new ones, never a part:
 * the new bytes go to a temporary file beside it, which is then renamed over it.
 *
 * @module
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import process from "node:process";

let counter = 0;

/** A path beside `path` that no other writer of this or another process picks. */
export function tempPathBeside(path: string): string {
  return `${path}.tmp-${process.pid}-${Date.now()}-${counter++}`;
}

/**
 * Writes `data` to `path` atomically (its directory is created when missing). On failure
 * the temporary file is removed, the old file is left as it was, and the file system's
 * error is thrown.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = tempPathBeside(path);
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(tmp, data);
    renameSync(tmp, path);
  } catch (err) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing was created
    }
    throw err;
  }
}
