/**
 * Views over a taskset: lazy iteration of its tasks, `head(n)` and `shuffle(seed)`
 * (Python `Taskset.__iter__`, `head`, `shuffle`).
 *
 * Iterating a view calls the plugin's `load()` afresh, copies each task (the plugin's
 * objects are never mutated), gives it an `idx` (its load position) when it has none,
 * replaces its `system_prompt` when the config's `system_prompt` is a string, then applies
 * the view's transforms in order. Views are immutable; `head` and `shuffle` return new
 * views and never change the one they start from.
 *
 * @module
 */
import { errorMessage, InputError, PluginError, VerifiersError } from "./errors.ts";
import type { TasksetFields } from "./common_keys.ts";
import type { TasksetConfig, TasksetPlugin } from "./contract.ts";
import { taskHash } from "./tasks/hash.ts";
import type { TaskData } from "./tasks/task_data.ts";

type Source = () => AsyncIterable<TaskData>;

/**
 * The seeded PRNG of verifiers-ts (mulberry32): returns floats in `[0, 1)`. The 32-bit
 * state starts as `lo ^ imul(hi, 0x9e3779b9)` where `lo`/`hi` are the low and high 32 bits
 * of the integer `seed` (negative seeds in two's complement of their 53-bit value).
 */
export function seededRandom(seed: number): () => number {
  const lo = seed >>> 0;
  const hi = Math.floor(seed / 0x100000000) >>> 0;
  let state = (lo ^ Math.imul(hi, 0x9e3779b9)) >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 0x100000000;
  };
}

/**
 * Shuffles `items` in place with Fisher–Yates driven by {@link seededRandom}: for `i` from
 * the last index down to 1, swap item `i` with item `floor(rand() × (i + 1))`.
 */
export function seededShuffle<T>(items: T[], seed: number): T[] {
  const rand = seededRandom(seed);
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T]; // 0 <= j <= i < items.length
  }
  return items;
}

function iterate(loaded: unknown, id: string): AsyncIterable<unknown> | Iterable<unknown> {
  if (loaded !== null && typeof loaded === "object") {
    if (Symbol.asyncIterator in loaded) return loaded as AsyncIterable<unknown>;
    if (Symbol.iterator in loaded) return loaded as Iterable<unknown>;
  }
  throw new PluginError(
    "taskset_load_invalid",
    `taskset '${id}' load() returned ${loaded === null ? "null" : typeof loaded}, not tasks`,
    { hint: "load() must return an array, an iterable or an async iterable of tasks" },
  );
}

/** A plugin's own failure while loading, as a typed error naming the taskset (exit 2). */
function loadFailed(id: string, err: unknown): unknown {
  if (err instanceof VerifiersError) return err;
  return new PluginError(
    "taskset_load_failed",
    `taskset '${id}' failed to load its tasks: ${errorMessage(err)}`,
    {
      hint: "the error came from the taskset's load(): check its data source and its config keys",
    },
  );
}

async function loadFailure<T>(id: string, load: () => T | Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw loadFailed(id, err);
  }
}

async function* withLoadFailures(
  id: string,
  items: AsyncIterable<unknown> | Iterable<unknown>,
): AsyncGenerator<unknown> {
  try {
    for await (const item of items) yield item;
  } catch (err) {
    throw loadFailed(id, err);
  }
}

async function* baseTasks(
  plugin: TasksetPlugin,
  config: TasksetConfig,
): AsyncGenerator<TaskData> {
  const override = typeof config.system_prompt === "string" ? config.system_prompt : null;
  const loaded: unknown = await loadFailure(plugin.id, () => plugin.load(config));
  let position = 0;
  const items = iterate(loaded, plugin.id);
  for await (const item of withLoadFailures(plugin.id, items)) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      throw new PluginError(
        "taskset_load_invalid",
        `taskset '${plugin.id}' yielded a non-object task at position ${position}`,
        { hint: "each task must be a plain object with at least a 'prompt' field" },
      );
    }
    const task: TaskData = { ...(item as TaskData) };
    if (task.idx === undefined || task.idx === null) task.idx = position;
    if (override !== null) task.system_prompt = override;
    position++;
    yield task;
  }
}

/** A taskset's resolved config; the common keys default to the plugin's id, no system prompt. */
export type TasksetViewConfig = Partial<TasksetFields> & Record<string, unknown>;

/** A lazy, immutable view of a taskset's tasks under a resolved config. */
export class TasksetView implements AsyncIterable<TaskData> {
  /** The taskset plugin. */
  readonly plugin: TasksetPlugin;
  /** The taskset's resolved config (passed to `load()` and hooks). */
  readonly config: TasksetConfig;
  #infinite: boolean;
  #source: Source;

  /** The full view of `plugin` under `config`. */
  constructor(plugin: TasksetPlugin, config: TasksetViewConfig = {}) {
    const full: TasksetConfig = { id: plugin.id, system_prompt: null, ...config };
    this.plugin = plugin;
    this.config = full;
    this.#infinite = plugin.infinite === true;
    this.#source = () => baseTasks(plugin, full);
  }

  /** The taskset id (used in messages). */
  get id(): string {
    return this.plugin.id;
  }

  /** True when iterating this view never ends. */
  get infinite(): boolean {
    return this.#infinite;
  }

  /** Iterates the tasks; each iteration loads the taskset afresh. */
  [Symbol.asyncIterator](): AsyncIterator<TaskData> {
    return this.#source()[Symbol.asyncIterator]();
  }

  /** All tasks of a finite view, in order. */
  async toArray(): Promise<TaskData[]> {
    if (this.#infinite) throw infiniteError(this.id, "collect all tasks");
    const out: TaskData[] = [];
    for await (const t of this) out.push(t);
    return out;
  }

  /** The first `n` tasks: a finite view that builds only `n` tasks from the source. */
  head(n: number): TasksetView {
    if (!Number.isSafeInteger(n) || n < 0) {
      throw new InputError(
        "num_tasks_invalid",
        `num_tasks must be a non-negative integer, got ${n}`,
      );
    }
    const parent = this.#source;
    return this.#derive(false, async function* () {
      if (n === 0) return;
      let count = 0;
      for await (const task of parent()) {
        yield task;
        if (++count >= n) return;
      }
    });
  }

  /**
   * All tasks in a seeded random order ({@link seededShuffle}; default seed 0). Materializes
   * the view, so an infinite view is refused: bound it with `head` first.
   */
  shuffle(seed = 0): TasksetView {
    if (!Number.isSafeInteger(seed)) {
      throw new InputError("seed_invalid", `shuffle seed must be an integer, got ${seed}`);
    }
    if (this.#infinite) throw infiniteError(this.id, "shuffle");
    const parent = this.#source;
    return this.#derive(false, async function* () {
      const all: TaskData[] = [];
      for await (const task of parent()) all.push(task);
      yield* seededShuffle(all, seed);
    });
  }

  /** The task's durable key: the taskset's `key(task)` hook, else the task hash. */
  key(task: TaskData): string {
    return this.plugin.key ? this.plugin.key(task) : taskHash(task);
  }

  #derive(infinite: boolean, source: Source): TasksetView {
    const view = new TasksetView(this.plugin, this.config);
    view.#infinite = infinite;
    view.#source = source;
    return view;
  }
}

function infiniteError(id: string, action: string): InputError {
  return new InputError(
    "taskset_infinite",
    `${id} is infinite - cannot ${action}; bound it first with head(num_tasks)`,
    { hint: "bound the run with -n / num_tasks" },
  );
}
