/**
 * `vf eval`: load and validate the config, then either print help, write the config
 * (`--dry-run`), or run the evaluation.
 *
 * @module
 */
import process from "node:process";
import type { z } from "zod";
import { describeFields, type FieldHelp, renderFields } from "../config/help.ts";
import { type LoadedConfig, loadEvalConfig } from "../config/load_config.ts";
import { writeEvalJson } from "../run/config_dump.ts";
import { resolveRunDir } from "../run/naming.ts";
import { err, out } from "./output.ts";

function section(title: string, rows: FieldHelp[]): string {
  return rows.length ? `${title}\n${renderFields(rows)}\n` : "";
}

/** The help text of `vf eval`, narrowed to the plugins the given ids resolve to. */
export function evalHelp(loaded: LoadedConfig): string {
  const rows = describeFields(loaded.schema as z.ZodType);
  const take = (prefix: string) => {
    const picked = rows.filter((r) => r.flag.startsWith(prefix));
    for (const r of picked) rows.splice(rows.indexOf(r), 1);
    return picked;
  };
  const { taskset, harness, runtime, judges } = loaded.plugins;
  const tasksetRows = take("--env.taskset.");
  const harnessRows = take("--env.agent.harness.");
  const runtimeRows = take("--env.agent.runtime.");
  const agentRows = take("--env.agent.");
  const envRows = take("--env.");
  const parts = [
    "Usage: vf eval [<taskset>] [@ config.toml ...] [--dotted.flags ...]\n",
    "Flags are config paths: kebab or snake case (--env.agent.max-turns 4, --env.agent.max_turns=4);",
    "booleans as --flag/--no-flag; lists as JSON or repeated values; dicts as JSON; None = null.",
    "Short forms: -m model, -n num_tasks, -r num_rollouts, -c max_concurrent, -s shuffle, -v verbose, -o output_dir.\n",
    section("Run", rows),
    section(
      taskset
        ? `Taskset "${taskset.id}" — ${taskset.description}`
        : "Taskset (give an id to see its own fields)",
      tasksetRows,
    ),
    section(`Harness "${harness?.id ?? "?"}" — ${harness?.description ?? ""}`, harnessRows),
    section(`Runtime "${runtime?.id ?? "?"}" — ${runtime?.description ?? ""}`, runtimeRows),
    section("Agent", agentRows),
    section("Env", envRows),
  ];
  if (judges.length) {
    parts.push(`Judges: ${judges.map((j) => `"${j.id}" — ${j.description}`).join("; ")}\n`);
  }
  return parts.join("\n");
}

/** Runs `vf eval` with the arguments after `eval`; returns the exit code. */
export async function evalCommand(argv: string[]): Promise<number> {
  const cwd = process.cwd();
  const loaded = await loadEvalConfig(argv, { cwd });
  if (loaded.help) {
    await out(evalHelp(loaded));
    return 0;
  }
  const config = loaded.config;
  const runDir = loaded.resumeDir ?? resolveRunDir(config, cwd);
  if (config.dry_run) {
    const path = writeEvalJson(runDir, config);
    await err(`config valid; wrote ${path}`);
    await out(path);
    return 0;
  }
  const { runEvalFromCli } = await import("./eval_run.ts");
  const lines: Promise<void>[] = [];
  const code = await runEvalFromCli(loaded, {
    runDir,
    cwd,
    err: (line) => void lines.push(err(line)),
    out: (line) => void lines.push(out(line)),
  });
  await Promise.all(lines);
  return code;
}
