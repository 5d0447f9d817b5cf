/**
 * The first step of a run: the input checks before anything touches the disk (a taskset,
 * a readable system prompt file, a bounded and non-empty selection, a resume with a
 * directory), then the run directory prepared (a resume checks its saved config), and the
 * work directories a killed run left behind removed (every run does it, not only a resume:
 * a killed run that is never resumed must not leave them for good).
 *
 * @module
 */
import { resolve } from "node:path";
import type { EvalConfig } from "../config/eval_config.ts";
import type { LoadedConfig } from "../config/load_config.ts";
import type { TasksetPlugin } from "../../kit/contract.ts";
import { InputError } from "../../kit/errors.ts";
import { TasksetView } from "../../kit/taskset_view.ts";
import { removeOrphanWorkdirs } from "../../kit/runtime/workdirs.ts";
import { addClientSecrets, addHostSecrets } from "../../kit/secrets.ts";
import { getAllEnv } from "../../kit/_runtime/env.ts";
import { MAX_PROMPT_FILE_BYTES, readTextFileBounded } from "../../kit/util/read_text.ts";
import { prepareRunDir } from "./run_dir.ts";
import { checkResumeConfig } from "./resume.ts";
import { checkBounded, countSelected, selectTasks } from "./select.ts";
import { quote } from "../../kit/util/quote.ts";

/** Where a run writes (`null`: nowhere) and the base of the config's relative paths. */
export interface RunPlace {
  runDir: string | null;
  cwd: string;
}

function readSystemPrompt(path: string, cwd: string): string {
  return readTextFileBounded(resolve(cwd, path), {
    shownAs: path,
    what: "env.taskset.system_prompt file",
    maxBytes: MAX_PROMPT_FILE_BYTES,
    unreadableCode: "system_prompt_unreadable",
    hint: "give a path to a readable text file (relative to the working directory)",
  });
}

/** Removes the local work directories (and files next to them) of runs killed before they
 * could clean up: those under the configured `workdir_root` and the system temp folder. */
function removeCrashedWorkdirs(config: EvalConfig): void {
  const root: unknown = Reflect.get(config.env.agent.runtime, "workdir_root");
  removeOrphanWorkdirs(typeof root === "string" ? root : undefined);
  if (typeof root === "string") removeOrphanWorkdirs();
}

/** The error of a run whose taskset and selection yield no task at all. */
export function emptySelection(config: EvalConfig): InputError {
  const n = config.num_tasks;
  return new InputError(
    "no_tasks",
    `Nothing to run: taskset ${quote(config.env.taskset.id)} yields no tasks` +
      (n !== null ? ` (with -n ${n})` : ""),
    { hint: "check the taskset's config (e.g. its file) and the selection flags" },
  );
}

/** Registers the run's secrets (host credentials, the run's and the judges' clients). */
function registerRunSecrets(config: EvalConfig): void {
  const env = getAllEnv();
  addHostSecrets(env);
  addClientSecrets(config.client, env);
  for (const judge of config.env.taskset.task.judges) addClientSecrets(judge, env);
}

/** The tasks a run selected, checked before anything touches the disk. */
export interface CheckedInputs {
  taskset: TasksetPlugin;
  /** The taskset's config with `system_prompt` replaced by the file's text. */
  tasksetConfig: EvalConfig["env"]["taskset"];
  view: TasksetView;
  /** How many tasks are selected (null on a resume, which reads its keys instead). */
  selected: number | null;
}

/** Step 1: input checks (then the run directory is prepared), before anything else. */
export async function checkInputs(loaded: LoadedConfig, options: RunPlace): Promise<CheckedInputs> {
  const { config } = loaded;
  const { runDir } = options;
  const { taskset } = loaded.plugins;
  if (!taskset) throw new InputError("taskset_missing", "Cannot run: no taskset");
  registerRunSecrets(config);
  const tasksetConfig = { ...config.env.taskset };
  if (config.env.taskset.system_prompt) {
    tasksetConfig.system_prompt = readSystemPrompt(config.env.taskset.system_prompt, options.cwd);
  }
  const all = new TasksetView(taskset, tasksetConfig);
  checkBounded(all, config);
  // an empty selection is refused before the run directory exists
  const selected = config.resume ? null : await countSelected(all, config);
  if (selected === 0) throw emptySelection(config);
  if (runDir === null && config.resume) {
    throw new InputError("resume_needs_dir", "Cannot resume an in-memory run", {
      hint: "resume names a run directory; give the run an output directory",
    });
  }
  if (runDir !== null) {
    const outputDir = resolve(options.cwd, config.output_dir);
    prepareRunDir(runDir, outputDir, { clean: config.clean, resume: config.resume });
    if (config.resume) checkResumeConfig(runDir, config);
  }
  removeCrashedWorkdirs(config);
  return { taskset, tasksetConfig, view: selectTasks(all, config), selected };
}

/**
 * The selected tasks of a loaded config, as a run of it selects them (shuffle, `num_tasks`,
 * the system prompt file read), without touching any run directory.
 */
export function selectionView(loaded: LoadedConfig, cwd: string): TasksetView {
  const { config } = loaded;
  const { taskset } = loaded.plugins;
  if (!taskset) throw new InputError("taskset_missing", "Cannot run: no taskset");
  const tasksetConfig = { ...config.env.taskset };
  if (config.env.taskset.system_prompt) {
    tasksetConfig.system_prompt = readSystemPrompt(config.env.taskset.system_prompt, cwd);
  }
  return selectTasks(new TasksetView(taskset, tasksetConfig), config);
}
