/**
 * Task selection: `shuffle` (seed 0 unless `seed`) then `head(num_tasks)`; an infinite
 * taskset must be bounded with `-n`.
 *
 * @module
 */
import { InputError } from "../errors.ts";
import type { TasksetView } from "../tasks/taskset_view.ts";

/** Applies shuffle and num_tasks to a taskset view, in that order. */
export function selectTasks(
  view: TasksetView,
  options: { shuffle: boolean; seed: number | null; num_tasks: number | null },
): TasksetView {
  if (view.infinite && options.num_tasks === null) {
    throw new InputError(
      "taskset_infinite",
      `taskset "${view.id}" is infinite - bound the run with -n`,
      {
        hint: "pass -n/--num-tasks N",
      },
    );
  }
  let v = view;
  if (options.shuffle) {
    if (v.infinite) v = v.head(options.num_tasks!);
    v = v.shuffle(options.seed ?? 0);
  }
  if (options.num_tasks !== null) v = v.head(options.num_tasks);
  return v;
}
