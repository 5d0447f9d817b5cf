/**
 * Task selection: `shuffle` (seed 0 unless `seed`) then `head(num_tasks)`; an infinite
 * taskset must be bounded with `-n`. An infinite taskset with `-n` and `shuffle` shuffles
 * its first `num_tasks` tasks (shuffling an unbounded stream is impossible).
 *
 * @module
 */
import { InputError } from "../../kit/errors.ts";
import type { TasksetView } from "../../kit/taskset_view.ts";
import { quote } from "../../kit/util/quote.ts";

/** The selection settings of a run (a subset of the eval config). */
export interface SelectionOptions {
  shuffle: boolean;
  seed: number | null;
  num_tasks: number | null;
}

/** Refuses an infinite taskset without `num_tasks` (before any work is done). */
export function checkBounded(view: TasksetView, options: SelectionOptions): void {
  if (view.infinite && options.num_tasks === null) {
    throw new InputError(
      "taskset_infinite",
      `taskset ${quote(view.id)} is infinite - bound the run with -n`,
      { hint: "pass -n/--num-tasks N" },
    );
  }
}

/** Applies shuffle and num_tasks to a taskset view, in that order. */
export function selectTasks(view: TasksetView, options: SelectionOptions): TasksetView {
  checkBounded(view, options);
  let v = view;
  if (options.shuffle) {
    if (v.infinite) v = v.head(options.num_tasks!);
    v = v.shuffle(options.seed ?? 0);
  }
  if (options.num_tasks !== null) v = v.head(options.num_tasks);
  return v;
}

/**
 * How many tasks {@link selectTasks} yields, without keeping any of them: `num_tasks` for an
 * infinite taskset (no load at all), else one counting pass over the unshuffled view,
 * stopped at `num_tasks` (shuffling changes the order, never the count).
 */
export async function countSelected(
  view: TasksetView,
  options: SelectionOptions,
): Promise<number> {
  checkBounded(view, options);
  if (view.infinite) return options.num_tasks!;
  const bounded = options.num_tasks === null ? view : view.head(options.num_tasks);
  let n = 0;
  for await (const _ of bounded) n++;
  return n;
}
