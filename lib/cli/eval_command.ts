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
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { tokenizeArgv } from "../config/argv.ts";
import { InputError } from "../../kit/errors.ts";
import { getAllEnv, getEnv } from "../../kit/_runtime/env.ts";
import { writeEvalJson } from "../run/config_dump.ts";
import { resolveRunDir } from "../run/naming.ts";
import { placeShard } from "../run/shard_place.ts";
import { acquireLease } from "../run/lease.ts";
import { missingKeyWarning } from "../config/key_warning.ts";
import { err, out, paint } from "./output.ts";
import { ALL_ERRORED_EXIT, everyEpisodeErrored, readRunSummary, runReport } from "./run_report.ts";
import { quote } from "../../kit/util/quote.ts";

const RESUME_USAGE =
  "resume with `vf eval --resume <run-dir>` (or `vf eval @ <run-dir>/configs/eval.json --resume`)";

function resumeNeedsFolder(): InputError {
  return new InputError("resume_needs_run", "Cannot resume: --resume needs a run folder", {
    hint: `${RESUME_USAGE}; run folders are under the output dir (outputs/ by default)`,
  });
}

/**
 * Stops at the first cause, before the config is loaded: a config file given without `@`,
 * a bare `--resume` with no config file and no run name, or `--resume <dir>` where no run
 * was saved.
 */
function checkFirstCause(argv: string[], cwd: string): void {
  const parsed = tokenizeArgv(argv);
  if (parsed.help) return;
  const first = parsed.positional[0];
  if (first !== undefined && /\.(toml|json)$/i.test(first) && existsSync(resolve(cwd, first))) {
    throw new InputError(
      "config_file_without_at",
      `${quote(first)} is a config file, not a taskset`,
      {
        hint: `put @ before a config file: vf eval @ ${quote(first, { bare: true })} ...`,
      },
    );
  }
  const resume = parsed.flags.find((f) => f.text === "--resume" || f.text.startsWith("--resume="));
  if (!resume) return;
  if (parsed.resumeDir !== undefined) {
    const dir = resolve(cwd, parsed.resumeDir);
    if (!existsSync(join(dir, "configs", "eval.json"))) {
      throw new InputError(
        "resume_no_run",
        `Cannot resume ${dir}: ${
          existsSync(dir) ? "it holds no configs/eval.json" : "no such folder"
        }`,
        { hint: RESUME_USAGE },
      );
    }
    return;
  }
  const named = parsed.flags.some((f) => /^--run[.-](name|dir)\b/.test(f.text));
  if (parsed.files.length === 0 && !named) throw resumeNeedsFolder();
}

function section(title: string, rows: FieldHelp[]): string {
  return rows.length ? `${title}\n${renderFields(rows)}\n` : "";
}

/** The help text of `vf eval`, narrowed to the plugins the given ids resolve to. */
function evalHelp(loaded: LoadedConfig): string {
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
  parts.push(
    "Examples:\n  vf eval @ examples/quickstart.toml --model oracle\n" +
      "  vf eval reverse-text -m gpt-4.1-mini -n 20 -r 3 --sampling.temperature 0.7\n" +
      "  vf eval --resume outputs/<run>      # run what an earlier launch still owes\n",
  );
  if (judges.length) {
    parts.push(`Judges: ${judges.map((j) => `"${j.id}" — ${j.description}`).join("; ")}\n`);
  }
  return parts.join("\n");
}

/**
 * Runs `vf validate-config`: loads and validates the config as `vf eval` would, without
 * requiring a model and without writing anything. Exit 0 (valid) or a thrown input error.
 */
export async function validateConfigCommand(argv: string[]): Promise<number> {
  const loaded = await loadEvalConfig(argv.filter((a) => a !== "--dry-run"), {
    cwd: process.cwd(),
    validateOnly: true,
    env: getAllEnv(),
  });
  if (loaded.help) {
    await out(evalHelp(loaded));
    return 0;
  }
  const { config } = loaded;
  const judges = config.env.taskset.task.judges.map((j) => j.id);
  await out(
    `config valid: taskset ${config.env.taskset.id} · harness ${config.env.agent.harness.id} · ` +
      `runtime ${config.env.agent.runtime.type}` +
      (judges.length ? ` · judges ${judges.join(", ")}` : "") +
      ` · model ${config.model ?? "(none given)"}`,
  );
  return 0;
}

/** Runs `vf eval` with the arguments after `eval`; returns the exit code. */
export async function evalCommand(argv: string[]): Promise<number> {
  const cwd = process.cwd();
  checkFirstCause(argv, cwd);
  const loaded = await loadEvalConfig(argv, { cwd, env: getAllEnv() });
  if (!loaded.help) loaded.lock?.save(); // `--lock` records what this launch resolved
  for (const warning of loaded.warnings ?? []) await err(`warning: ${warning}`);
  if (loaded.help) {
    await out(evalHelp(loaded));
    return 0;
  }
  const config = loaded.config;
  const named = config.run.name != null || config.run.dir != null;
  const placed = placeShard(config, cwd, getEnv, loaded.resumeDir);
  const runDir = placed?.runDir ?? loaded.resumeDir ?? resolveRunDir(config, cwd);
  if (config.resume && !loaded.resumeDir && !placed) {
    if (!named) throw resumeNeedsFolder();
    if (!existsSync(join(runDir, "configs", "eval.json"))) {
      throw new InputError("resume_no_run", `Cannot resume: there is no run in ${runDir}`, {
        hint: `${RESUME_USAGE}; \`ls ${config.output_dir}\` lists the runs there`,
      });
    }
  }
  if (config.dry_run) {
    const path = writeEvalJson(runDir, config);
    await err(`config valid; wrote ${path}`);
    await out(path);
    return 0;
  }
  const keyWarning = missingKeyWarning(config);
  if (keyWarning) await err(`${paint("warning:", "yellow")} ${keyWarning}`);
  const { runEvalFromCli } = await import("./eval_run.ts");
  const lines: Promise<void>[] = [];
  // a shard is run by one process at a time (lib/run/lease.ts); a lost lease stops this one
  const lost = new AbortController();
  const lease = placed
    ? acquireLease(runDir, {
      onLost: (by) => lost.abort(new Error(`the lease of ${runDir} was taken over by ${by}`)),
    })
    : null;
  let code: number;
  try {
    code = await runEvalFromCli(loaded, {
      runDir,
      cwd,
      signal: lost.signal,
      err: (line) => void lines.push(err(line)),
      out: (line) => void lines.push(out(line)),
    });
  } finally {
    lease?.release();
  }
  await Promise.all(lines);
  const summary = readRunSummary(runDir);
  if (!summary) return code;
  if (code === 0 && config.fail_on_error === null && everyEpisodeErrored(summary)) {
    code = ALL_ERRORED_EXIT;
  }
  if (config.display === "none") return code;
  const report = runReport(summary, runDir, cwd);
  if (code === ALL_ERRORED_EXIT && config.fail_on_error === null) {
    report.unshift(
      `${paint("error:", "red")} every episode errored (exit ${ALL_ERRORED_EXIT}; ` +
        "--fail-on-error <count> sets another limit)",
    );
  }
  if (report.length) await err(report.join("\n"));
  return code;
}
