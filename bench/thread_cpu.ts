/**
 * The process's CPU time split by thread, on Linux (`/proc/self/task/<tid>/stat`, user +
 * system, in clock ticks of 10 ms): the JavaScript thread, and every other thread grouped by
 * the name the runtime gave it (a trailing number dropped), such as JavaScriptCore's
 * compiler (`JITWorker`) and collector (`HeapHelper`) threads, Bun's `HTTP Client`, V8's
 * `V8 DefaultWorker` (parallel collection and compilation), under the names Linux keeps
 * (15 characters: `V8 DefaultWorke`). Process CPU time counts them all; the split tells the
 * code's own work from the engine's work on it.
 *
 * @module
 */
import { readdirSync, readFileSync } from "node:fs";
import process from "node:process";
import { median } from "./common.ts";

/** Milliseconds of CPU time per thread group; `main` is the JavaScript thread. */
export type ThreadCpu = Map<string, number>;

/** Milliseconds per clock tick of `/proc` (USER_HZ is 100 on Linux). */
const TICK_MS = 10;

/** Per-thread CPU time now, keyed by thread id; null where `/proc` cannot tell (not Linux). */
export function threadTimes(): Map<string, { group: string; ms: number }> | null {
  let ids: string[];
  try {
    ids = readdirSync("/proc/self/task");
  } catch {
    return null;
  }
  const times = new Map<string, { group: string; ms: number }>();
  for (const id of ids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${id}/stat`, "utf8");
    } catch {
      continue; // the thread ended since the listing
    }
    // `tid (name) state ...`: the name may hold spaces and parentheses, so cut at the last ')'
    const close = stat.lastIndexOf(")");
    const name = stat.slice(stat.indexOf("(") + 1, close);
    const fields = stat.slice(close + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime (fields 14 and 15)
    const group = Number(id) === process.pid ? "main" : name.replace(/[\s#]*\d+$/, "");
    times.set(id, { group, ms: ticks * TICK_MS });
  }
  return times;
}

/**
 * CPU time per thread group spent between two {@link threadTimes} readings. A thread that
 * ended between them is not in the second and is left out (the process total counts it).
 */
export function threadCpuBetween(
  before: ReturnType<typeof threadTimes>,
  after: ReturnType<typeof threadTimes>,
): ThreadCpu | null {
  if (before === null || after === null) return null;
  const split: ThreadCpu = new Map();
  for (const [id, { group, ms }] of after) {
    const spent = ms - (before.get(id)?.ms ?? 0);
    if (spent > 0) split.set(group, (split.get(group) ?? 0) + spent);
  }
  return split;
}

/**
 * The groups of several readings as `name X µs` per unit (median over the readings, a
 * group absent from one counting 0 there), largest first, groups under `minUs` left out.
 */
export function threadCpuLine(splits: ThreadCpu[], units: number, minUs = 2): string {
  const groups = new Set(splits.flatMap((s) => [...s.keys()]));
  return [...groups]
    .map((g) => [g, median(splits.map((s) => s.get(g) ?? 0)) * 1000 / units] as const)
    .filter(([, us]) => us >= minUs)
    .sort((a, b) => b[1] - a[1])
    .map(([g, us]) => `${g} ${us.toFixed(0)} µs`)
    .join(", ");
}
