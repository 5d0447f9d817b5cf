/**
 * Platform shim: kills a process, its group and every process descending from it. A
 * program's child may leave the group (its own session: `setsid`, pi's bash tool), so the
 * group alone does not reach it; the tree is read from `/proc` before anything is killed,
 * since an orphan is reparented and lost to us.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";

/** SIGKILLs `pid`, its process group, and each descendant and its group. */
export function killTree(pid: number): void {
  const tree = descendants(pid);
  for (const target of [-pid, pid, ...tree.flatMap((p) => [-p, p])]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // already gone, or not a group leader
    }
  }
}

/**
 * The processes descending from `root` (children, theirs, ...), read from `/proc`; empty
 * where there is no `/proc` (the process group is then all that is killed).
 */
export function descendants(root: number): number[] {
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const name of entries) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited meanwhile
    }
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const list = children.get(ppid);
    if (list) list.push(Number(name));
    else children.set(ppid, [Number(name)]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const c of children.get(queue.pop()!) ?? []) {
      out.push(c);
      queue.push(c);
    }
  }
  return out;
}
