/**
 * `vf replay <run-dir>`: re-scores a finished run's saved traces (a verifiers-ts or a
 * Python verifiers run) with the judges of the layered config, without sampling again; see
 * `lib/run/run_replay.ts`. The source run's saved config is the base layer; `@ file.toml`
 * and flags go over it (`--taskset.task.judges` replaces the judges). Writes a new run
 * folder, `outputs/<taskset>--replay/<uuid>` unless `-o` names one, never the source.
 *
 * @module
 */
import process from "node:process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { ConfigError, InputError } from "../../kit/errors.ts";
import { getAllEnv } from "../../kit/_runtime/env.ts";
import { loadEvalConfig } from "../config/load_config.ts";
import { savedConfig, writeOutputAtomic } from "../run/config_dump.ts";
import { prepareRunDir } from "../run/run_dir.ts";
import { runReplay } from "../run/run_replay.ts";
import { sortedJson } from "../run/validate_results.ts";
import { out } from "./output.ts";
import { openCommandSession } from "./command_session.ts";
import { parseTaskCommandArgs, type TaskCommandArgs } from "./task_command_args.ts";

/** The saved config of a run folder: `configs/<first>.json` (Python's `saved_config_path`). */
function savedConfigPath(runDir: string): string | null {
  const dir = join(runDir, "configs");
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return null;
  const names = readdirSync(dir).filter((n) => n.endsWith(".json") && n !== "verifiers-ts.json")
    .sort();
  return names.length ? join(dir, names[0]!) : null;
}

function count(args: TaskCommandArgs, names: string[], min: number): number | null {
  for (const name of names) {
    const raw = args.own.get(name) ?? args.ownFromFiles.get(name);
    if (raw === undefined || raw === null) continue;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) {
      throw new ConfigError([{
        path: names[0]!,
        message: `must be an integer >= ${min}, not ${JSON.stringify(raw)}`,
      }]);
    }
    return n;
  }
  return null;
}

/** Runs `vf replay` with the arguments after `replay`; returns the exit code. */
export async function replayCommand(argv: string[]): Promise<number> {
  const cwd = process.cwd();
  const [first, ...rest] = argv;
  if (first === undefined || first.startsWith("-") || first.startsWith("@")) {
    throw new InputError("usage", "vf replay needs the run folder to re-score first", {
      hint: "vf replay outputs/<run> [flags] (vf replay --help)",
    });
  }
  const source = resolve(cwd, first);
  const configPath = savedConfigPath(source);
  if (configPath === null) {
    throw new InputError("resume_no_run", `Cannot replay ${first}: no saved config under it`, {
      hint:
        "a run folder holds configs/eval.json (vf eval, Python verifiers) or configs/replay.json",
    });
  }
  const args = parseTaskCommandArgs(["@", configPath, ...rest], {
    command: "replay",
    own: {
      "num-traces": "value",
      n: "value",
      "num-rescores": "value",
      r: "value",
      "output-dir": "value",
      o: "value",
      "dry-run": "boolean",
    },
    runFile: "replay.json",
    cwd,
  });
  const numTraces = count(args, ["num-traces", "n"], 1);
  const numRescores = count(args, ["num-rescores", "r"], 1) ?? 1;
  // the source's own output_dir is not where a replay goes
  const outFlag = args.own.get("output-dir") ?? args.own.get("o");
  const loaded = await loadEvalConfig(args.evalArgv, {
    cwd,
    base: args.base,
    validateOnly: true,
    env: getAllEnv(),
  });
  const { config } = loaded;
  const uuid = randomUUID();
  const outDir = typeof outFlag === "string"
    ? resolve(cwd, outFlag)
    : resolve(cwd, "outputs", `${config.env.taskset.id.split("/").pop()}--replay`, uuid);
  if (outDir === source) {
    throw new InputError(
      "usage",
      `--output-dir must differ from the source run (${first}); refusing to overwrite it`,
    );
  }
  prepareRunDir(outDir, outDir, { clean: false, resume: false });
  const { dump } = savedConfig(config);
  const env = dump.env as { taskset: unknown };
  writeOutputAtomic(
    join(outDir, "configs", "replay.json"),
    JSON.stringify(
      {
        taskset: env.taskset,
        num_traces: numTraces,
        num_rescores: numRescores,
        max_concurrent: config.max_concurrent,
        verbose: config.verbose,
        rich: config.display !== "plain" && config.display !== "none",
        output_dir: typeof outFlag === "string" ? outFlag : null,
        // not Python's ReplayConfig keys (it ignores extras): what judges fall back to
        model: dump.model,
        client: dump.client,
      },
      null,
      2,
    ) + "\n",
  );
  if (args.own.get("dry-run") === true) {
    await out(join(outDir, "configs", "replay.json"));
    return 0;
  }
  const session = openCommandSession({
    display: config.display,
    stopping: "saving what is scored",
  });
  const { mode } = session;
  try {
    const result = await runReplay(loaded, {
      source,
      outDir,
      cwd,
      numTraces,
      numRescores,
      signal: session.signal,
      err: session.say,
      ...(mode === "json" || mode === "none" ? {} : {
        display: (init) =>
          session.display({
            header: [
              `vf replay · ${init.run.envId} · ${init.run.owed} scores (${init.run.tasks} tasks × ${numRescores}) · no sampling`,
              `source   ${source}`,
              `output   ${outDir}`,
            ],
            snapshot: init.snapshot,
          }),
      }),
    });
    session.endDisplay();
    const s = result.summary;
    if (config.display === "json") await out(sortedJson(s));
    else if (config.display !== "none") {
      const f = (v: number | null) => (v === null ? "—" : v.toFixed(3));
      const lines = s.tasks.map((t) =>
        `task ${String(t.idx)}: reward ${f(t.mean)}` +
        (numRescores > 1 ? ` ± ${f(t.std)} over ${t.rewards.length}` : "") +
        ` (source ${t.source_rewards.map((r) => f(r)).join(", ")})`
      );
      lines.push(
        `${s.scored} scored, ${s.skipped} skipped (errored rollouts), ${s.errored} with scoring errors`,
        `results: ${outDir}`,
      );
      await out(lines.join("\n"));
    }
    return result.cancelled ? 130 : 0;
  } finally {
    session.close();
  }
}
