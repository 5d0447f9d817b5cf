/**
 * Work directories of local runtimes, and the cleanup of those a crashed run left behind.
 * A work directory that is removed at stop carries its owner's process id in its name
 * (`vf-<name>-p<pid>-XXXXXX`); one whose process is gone belongs to a run that was killed
 * before it could clean up, and the next run (`vf eval`, a resume too) or `vf sandboxes gc`
 * removes it. Files a harness puts next to a work directory are named the same way. Directories
 * of live processes, directories kept on purpose (`keep_workdir`, no pid in the name) and
 * other users' directories are never touched.
 *
 * @module
 */
import { readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";

const OWNED = /^vf-.*-p(\d+)-[A-Za-z0-9]{6}$/;

/** The `mkdtemp` prefix of a work directory owned (and removed at stop) by this process. */
export function ownedWorkdirPrefix(name: string): string {
  return `vf-${name}-p${process.pid}-`;
}

/** True while a process with this id exists (EPERM: it exists, owned by someone else). */
export function processAlive(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as { code?: string }).code === "EPERM";
  }
}

/**
 * Removes the work directories under `root` (default: the system temp directory) whose
 * owning process is gone. Returns the paths removed; failures are skipped silently.
 */
export function removeOrphanWorkdirs(root: string = tmpdir()): string[] {
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return [];
  }
  const uid = typeof process.getuid === "function" ? process.getuid() : null;
  const removed: string[] = [];
  for (const name of names) {
    const m = OWNED.exec(name);
    if (!m || processAlive(Number(m[1]))) continue;
    const path = join(root, name);
    try {
      const st = statSync(path);
      if (!st.isDirectory() || (uid !== null && st.uid !== uid)) continue;
      rmSync(path, { recursive: true, force: true });
      removed.push(path);
    } catch {
      // gone meanwhile, or not ours to remove
    }
  }
  return removed;
}
