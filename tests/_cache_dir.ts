/**
 * A test file's own user cache dir: `VF_CACHE_DIR` names a fresh folder from the file's
 * first `before` to its `after`, then goes back to what it was, so no later file sees it —
 * Bun runs every file in one process, where a leaked value hides the agent installs.
 */
import { after, before } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Registers the hooks; the returned function gives the folder once `before` has run. */
export function useOwnCacheDir(prefix: string): () => string {
  let dir = "";
  let saved: string | undefined;
  before(() => {
    saved = process.env.VF_CACHE_DIR;
    dir = mkdtempSync(join(tmpdir(), prefix));
    process.env.VF_CACHE_DIR = dir;
  });
  after(() => {
    if (saved === undefined) delete process.env.VF_CACHE_DIR;
    else process.env.VF_CACHE_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}
