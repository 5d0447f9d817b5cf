/**
 * Running an evaluation from a script: the config from a plain object or a config file,
 * validated exactly as `vf eval` validates it; the episodes as an async iterator, in the
 * order they complete; the summary at the end; cancellation by `AbortSignal`. The run
 * directory is written as `vf eval` writes it, or not at all (`runDir: null`).
 *
 * ```ts
 * import { startEval } from "@verifiers/verifiers-ts";
 *
 * const run = await startEval({ config: { env: { taskset: { id: "echo" } }, model: "oracle" } });
 * for await (const episode of run) console.log(episode.task.key, episode.ok);
 * const { summary } = await run.done;
 * ```
 *
 * @module
 */
import process from "node:process";
import { type LoadedConfig, loadEvalConfig } from "../config/load_config.ts";
import type { EvalConfig } from "../config/eval_config.ts";
import { InputError } from "../../kit/errors.ts";
import { writeStderr } from "../../kit/_runtime/tty.ts";
import { getAllEnv } from "../../kit/_runtime/env.ts";
import { missingKeyWarning } from "../config/key_warning.ts";
import { writeEvalJson } from "../run/config_dump.ts";
import { resolveRunDir } from "../run/naming.ts";
import { runEval } from "../run/run_eval.ts";
import type { RunSummary } from "../run/summary.ts";
import type { Episode } from "../../kit/trace/types.ts";

/** Options of {@link startEval}. */
export interface StartEvalOptions {
  /**
   * The config: a plain object with the keys of a config file (`env`, `model`,
   * `num_rollouts`, ...; plugin keys in their tables), or the path of a TOML or JSON
   * config file (relative to `cwd`).
   */
  config: Record<string, unknown> | string;
  /** `vf eval` arguments applied over the config (flags, `@ file` layers), e.g. `["-n", "5"]`. */
  args?: string[];
  /** Base of relative paths: config files, plugin paths, `output_dir`. @default process.cwd() */
  cwd?: string;
  /**
   * Where the run is written: omitted, `<output_dir>/<run.dir>` as `vf eval` does (with
   * `configs/eval.json`, `traces.jsonl`, `summary.json` and `logs/`); a path, that
   * directory; `null`, nowhere (an in-memory run).
   */
  runDir?: string | null;
  /** Cancels the run: no new episode starts, episodes in flight are cancelled. */
  signal?: AbortSignal;
  /** Warnings and (with `verbose`) log lines, one line each. @default written to stderr */
  onMessage?: (line: string) => void;
  /**
   * Hold completed episodes until the iterator takes them. `false` keeps nothing (for a
   * run only its summary is wanted from: memory stays flat), and iterating is refused.
   * @default true
   */
  episodes?: boolean;
}

/** What a finished run produced. */
export interface EvalResult {
  /** The summary, as written to `summary.json`. */
  summary: RunSummary;
  /** The run directory, `null` for an in-memory run. */
  runDir: string | null;
  /** True when the signal stopped the run (the summary covers what completed). */
  cancelled: boolean;
}

/** A running evaluation: iterate it for the episodes, await `done` for the summary. */
export interface EvalRun extends AsyncIterable<Episode> {
  /** The validated config (defaults filled, as written to `configs/eval.json`). */
  readonly config: EvalConfig;
  /** The run directory, `null` for an in-memory run. */
  readonly runDir: string | null;
  /** Settles when the run has ended: its result, or the error that stopped it. */
  readonly done: Promise<EvalResult>;
}

/** Episodes handed over from the run to one consumer, in completion order. */
class EpisodeQueue {
  #items: Episode[] = [];
  #waiting: ((r: IteratorResult<Episode>) => void) | null = null;
  #failed: ((e: unknown) => void) | null = null;
  #ended = false;
  #error: unknown = undefined;

  push(episode: Episode): void {
    if (this.#waiting) {
      const w = this.#waiting;
      this.#waiting = this.#failed = null;
      w({ value: episode, done: false });
    } else this.#items.push(episode);
  }

  end(error?: unknown): void {
    this.#ended = true;
    this.#error = error;
    if (!this.#waiting) return;
    const [w, f] = [this.#waiting, this.#failed!];
    this.#waiting = this.#failed = null;
    if (error !== undefined) f(error);
    else w({ value: undefined, done: true });
  }

  next(): Promise<IteratorResult<Episode>> {
    const item = this.#items.shift();
    if (item) return Promise.resolve({ value: item, done: false });
    if (this.#ended) {
      return this.#error !== undefined
        ? Promise.reject(this.#error)
        : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.#waiting = resolve;
      this.#failed = reject;
    });
  }
}

/** Loads a config the way `vf eval` does, from an object or a file, plus arguments. */
function loadConfig(options: StartEvalOptions, cwd: string): Promise<LoadedConfig> {
  const args = options.args ?? [];
  if (typeof options.config === "string") {
    return loadEvalConfig(["@", options.config, ...args], { cwd, env: getAllEnv() });
  }
  if (typeof options.config !== "object" || options.config === null) {
    throw new InputError("config_not_object", "config must be an object or a file path", {
      hint: "pass `config` a plain object of config keys, or the path of a TOML or JSON file",
    });
  }
  let base: Record<string, unknown>;
  try {
    base = structuredClone(options.config);
  } catch {
    throw new InputError("config_not_data", "config must be plain data (no functions or classes)", {
      hint: "give the keys of a config file: strings, numbers, booleans, null, arrays, objects",
    });
  }
  return loadEvalConfig(args, { cwd, base, env: getAllEnv() });
}

/**
 * Validates a config as `vf eval` does and starts the run. Rejects with the same
 * `ConfigError` (every problem listed) or `PluginError` as the command line; once it
 * resolves, the run is under way.
 */
export async function startEval(options: StartEvalOptions): Promise<EvalRun> {
  const cwd = options.cwd ?? process.cwd();
  const loaded = await loadConfig(options, cwd);
  if (loaded.help) {
    throw new InputError("help_in_script", "--help is not an evaluation", {
      hint: "drop --help from args; `vf eval --help` lists the fields",
    });
  }
  loaded.lock?.save(); // `--lock` records what this launch resolved, as `vf eval` does
  const config = loaded.config;
  const runDir = options.runDir === undefined
    ? loaded.resumeDir ?? resolveRunDir(config, cwd)
    : options.runDir;
  if (config.dry_run) {
    if (runDir !== null) writeEvalJson(runDir, config);
    throw new InputError("dry_run_in_script", "dry_run is set: the config is valid, nothing ran", {
      hint: "drop dry_run to run the evaluation",
    });
  }
  const say = options.onMessage ?? ((line: string) => writeStderr(line + "\n"));
  const keyWarning = missingKeyWarning(config); // as vf eval: a warning before the run
  if (keyWarning) say(`warning: ${keyWarning}`);
  const keep = options.episodes ?? true;
  const queue = new EpisodeQueue();
  const done = runEval(loaded, {
    runDir,
    cwd,
    signal: options.signal,
    err: say,
    ...(keep ? { onEpisode: (episode: Episode) => queue.push(episode) } : {}),
  }).then(
    (r): EvalResult => {
      queue.end();
      return { summary: r.summary, runDir: r.runDir, cancelled: r.cancelled };
    },
    (err) => {
      queue.end(err);
      throw err;
    },
  );
  done.catch(() => {}); // reported through `done` and the iterator, never as unhandled
  let iterated = false;
  return {
    config,
    runDir,
    done,
    [Symbol.asyncIterator](): AsyncIterator<Episode> {
      if (!keep) {
        throw new InputError("episodes_not_kept", "this run keeps no episodes", {
          hint: "start it without `episodes: false` to iterate them",
        });
      }
      if (iterated) {
        throw new InputError("episodes_taken", "the episodes of a run can be iterated once");
      }
      iterated = true;
      return { next: () => queue.next() };
    },
  };
}
