/**
 * Runs the `vf` CLI as a child process under the runtime running the tests.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import process from "node:process";
import { execPath } from "../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";

/** Absolute path of cli.ts. */
export const CLI = join(import.meta.dirname!, "..", "cli.ts");

/** What a CLI run returned. */
export interface CliResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** The argv that starts the CLI under the current runtime. */
export function cliArgv(args: string[]): [string, ...string[]] {
  return runtimeName() === "deno"
    ? [execPath(), "run", "-A", CLI, ...args]
    : [execPath(), CLI, ...args];
}

/** Runs a program to completion and collects its output (killed after `timeoutMs`). */
export function runProcess(
  cmd: string,
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs: number; input?: string },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: "1", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdin.end(options.input ?? "");
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => stdout += d);
    child.stderr.setEncoding("utf8").on("data", (d: string) => stderr += d);
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** Runs `vf <args>` and collects its output. */
export function runCli(
  args: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; input?: string } = {},
): Promise<CliResult> {
  const [cmd, ...rest] = cliArgv(args);
  return runProcess(cmd, rest, { ...options, timeoutMs: options.timeoutMs ?? 60_000 });
}
