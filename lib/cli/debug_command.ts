/**
 * `vf debug`: opens each selected task's runtime as a rollout would — a fresh runtime, the
 * task's `setup` — then runs one `--command` or `--script-path` there and prints what it
 * did (Python v1's `debug`, see `lib/run/run_debug.ts`). Exit 0 when every action
 * exited 0, 3 otherwise, 2 bad input, 130 stopped.
 *
 * @module
 */
import process from "node:process";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { InputError } from "../../kit/errors.ts";
import { getAllEnv } from "../../kit/_runtime/env.ts";
import { loadEvalConfig } from "../config/load_config.ts";
import { prepareRunDir } from "../run/run_dir.ts";
import { type DebugAction, runDebug } from "../run/run_debug.ts";
import { sortedJson } from "../run/validate_results.ts";
import { out } from "./output.ts";
import { openCommandSession } from "./command_session.ts";
import { parseTaskCommandArgs } from "./task_command_args.ts";
import { INVALID_EXIT, timeoutSeconds } from "./validate_command.ts";

/** Runs `vf debug` with the arguments after `debug`; returns the exit code. */
export async function debugCommand(argv: string[]): Promise<number> {
  const cwd = process.cwd();
  const args = parseTaskCommandArgs(argv, {
    command: "debug",
    own: {
      command: "value",
      "script-path": "value",
      script: "value",
      "output-dir": "value",
      o: "value",
    },
    runFile: "debug.json",
    cwd,
  });
  const command = args.own.get("command") ?? args.ownFromFiles.get("command");
  const script = args.own.get("script-path") ?? args.own.get("script") ??
    args.ownFromFiles.get("script-path");
  if ((typeof command === "string") === (typeof script === "string")) {
    throw new InputError("usage", "pass exactly one of --command or --script-path", {
      hint: "vf debug shell-basics --command 'ls -la'",
    });
  }
  let action: DebugAction;
  if (typeof script === "string") {
    const path = resolve(cwd, script);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new InputError(
        "script_not_found",
        `script_path does not exist or is not a file: ${script}`,
      );
    }
    action = { scriptPath: path };
  } else action = { command: command as string };
  const setupS = timeoutSeconds(args, "setup");
  const totalS = timeoutSeconds(args, "total");
  const loaded = await loadEvalConfig(args.evalArgv, {
    cwd,
    base: args.base,
    validateOnly: true,
    env: getAllEnv(),
  });
  const { config } = loaded;
  const outFlag = args.own.get("output-dir") ?? args.own.get("o");
  const outDir = typeof outFlag === "string"
    ? resolve(cwd, outFlag)
    : resolve(cwd, "outputs", `${config.env.taskset.id.split("/").pop()}--debug`, randomUUID());
  prepareRunDir(outDir, outDir, { clean: false, resume: false });
  const session = openCommandSession({
    display: config.display,
    stopping: "cancelling the actions in flight",
  });
  const { say } = session;
  try {
    say(
      `vf debug · ${config.env.taskset.id} · ${config.env.agent.runtime.type} runtime · results: ${outDir}`,
    );
    const infos = await runDebug(loaded, {
      outDir,
      cwd,
      action,
      setupS,
      totalS,
      signal: session.signal,
      err: say,
    });
    if (config.display === "json") await out(sortedJson(infos));
    else if (config.display !== "none") {
      const lines: string[] = [];
      for (const info of infos) {
        const task = info.task as { idx: unknown; name: unknown };
        lines.push(
          `── task ${String(task.idx)}${
            task.name ? ` (${String(task.name)})` : ""
          }: ${info.reason}` +
            (info.exit_code !== null && info.exit_code !== undefined
              ? ` (exit ${info.exit_code})`
              : "") +
            (info.error ? ` — ${String(info.error)}` : ""),
        );
        if (info.stdout) lines.push(String(info.stdout).replace(/\n$/, ""));
        if (info.stderr) lines.push(`[stderr] ${String(info.stderr).replace(/\n$/, "")}`);
      }
      lines.push(`results: ${join(outDir, "traces.jsonl")}`);
      await out(lines.join("\n"));
    }
    if (session.signal.aborted) return 130;
    return infos.every((i) => i.ok) ? 0 : INVALID_EXIT;
  } finally {
    session.close();
  }
}
