/**
 * Runs a Python 3 snippet with `input` on stdin and returns its stdout (tests compare our
 * ports with the real CPython behaviour).
 *
 * @module
 */
import { execFileSync } from "node:child_process";

/** Runs `python3 -c script` with `input` on stdin; returns stdout. */
export function runPython(script: string, input = ""): string {
  return execFileSync("python3", ["-c", script], { input, encoding: "utf8", maxBuffer: 64 << 20 });
}
