/**
 * The `shell-basics` taskset: ten small shell and file chores (create, count, fix, rename,
 * extract, sort, replace ...) run in the rollout's runtime. `setup` writes each task's
 * files into the workdir; reward `passed` is 1 when the task's check passes in the runtime
 * afterwards (check script exits 0, expected files match) and, for tasks that ask a question,
 * the reply mentions the answer. Works on the `local` runtime (no container needed).
 *
 * @module
 */
import { z } from "zod";
import {
  defineTaskset,
  type HookContext,
  lastReply,
  type Runtime,
  type TaskData,
  TaskError,
} from "../../../kit/mod.ts";
import { SHELL_TASKS, type ShellTask } from "./tasks.ts";

/** The system prompt of every shell-basics task. */
const SHELL_SYSTEM_PROMPT =
  "You are working in a Linux shell. Do the task in the current working directory " +
  "using shell commands, then reply briefly with the result.";

/** The spec of a task by its `name` (throws a TaskError for an unknown name). */
function shellTask(task: TaskData): ShellTask {
  const spec = SHELL_TASKS.find((t) => t.name === task.name);
  if (!spec) throw new TaskError(`shell-basics: unknown task '${String(task.name)}'`);
  return spec;
}

function needRuntime(ctx: HookContext, what: string): Runtime {
  if (!ctx.runtime) throw new TaskError(`shell-basics: ${what} needs a runtime`);
  return ctx.runtime;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** True when `answer` occurs in the reply as a whole token (not inside a longer word/number). */
function replyMentions(reply: string, answer: string): boolean {
  const re = new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(answer)}(?![\\p{L}\\p{N}_])`, "u");
  return re.test(reply);
}

async function bash(runtime: Runtime, script: string, signal: AbortSignal) {
  return await runtime.run(["bash", "-c", script], { signal });
}

/** Writes the task's files and runs its setup script in the runtime. */
async function setupShellTask(ctx: HookContext): Promise<void> {
  const spec = shellTask(ctx.task);
  const runtime = needRuntime(ctx, "setup");
  for (const [path, content] of Object.entries(spec.files ?? {})) {
    await runtime.write(path, content);
  }
  if (spec.setup) {
    const r = await bash(runtime, spec.setup, ctx.signal);
    if (r.exitCode !== 0) {
      throw new TaskError(
        `shell-basics: setup of '${spec.name}' exited ${r.exitCode}: ${r.stderr.slice(-500)}`,
      );
    }
  }
}

/** True when the runtime's state passes the task's check and expected files. */
async function stateMatches(spec: ShellTask, runtime: Runtime, signal: AbortSignal) {
  if (spec.check && (await bash(runtime, spec.check, signal)).exitCode !== 0) return false;
  const decoder = new TextDecoder();
  for (const [path, want] of Object.entries(spec.expect ?? {})) {
    const quoted = `'${path.replaceAll("'", "'\\''")}'`;
    if ((await bash(runtime, `test -f ${quoted}`, signal)).exitCode !== 0) return false;
    const got = decoder.decode(await runtime.read(path));
    if (got !== want && got + "\n" !== want) return false;
  }
  return true;
}

/** The `passed` reward: 1 when the check passes in the runtime (and the reply has the answer). */
async function shellPassed(ctx: HookContext): Promise<number> {
  const spec = shellTask(ctx.task);
  const runtime = needRuntime(ctx, "reward 'passed'");
  if (spec.answer !== undefined && !replyMentions(lastReply(ctx.trace), spec.answer)) return 0;
  return (await stateMatches(spec, runtime, ctx.signal)) ? 1 : 0;
}

/**
 * The gold check (`vf validate`): after setup, the reference solution's commands, then the
 * task's check; a solution command that fails is a TaskError carrying its output, and the
 * reference reply must mention the answer.
 */
async function shellGold(ctx: HookContext): Promise<boolean> {
  const spec = shellTask(ctx.task);
  const runtime = needRuntime(ctx, "validate");
  for (const command of spec.solution) {
    const r = await bash(runtime, command, ctx.signal);
    if (r.exitCode !== 0) {
      throw new TaskError(
        `shell-basics: solution command of '${spec.name}' exited ${r.exitCode}: ` +
          (r.stderr || r.stdout).slice(-500),
      );
    }
  }
  if (spec.answer !== undefined && !replyMentions(spec.solutionText, spec.answer)) return false;
  return await stateMatches(spec, runtime, ctx.signal);
}

/** The `shell-basics` taskset plugin. */
export default defineTaskset({
  id: "shell-basics",
  description: "Ten small shell and file chores checked in the runtime",
  config: z.object({}),
  needsContainer: false,
  load: () =>
    SHELL_TASKS.map((t, idx): TaskData => {
      const task: TaskData = {
        idx,
        name: t.name,
        prompt: t.prompt,
        system_prompt: SHELL_SYSTEM_PROMPT,
      };
      if (t.answer !== undefined) task.answer = t.answer;
      return task;
    }),
  key: (task) => `shell-basics:${String(task.name)}`,
  setup: setupShellTask,
  validate: shellGold,
  solution(task) {
    const spec = shellTask(task);
    return { commands: [...spec.solution], text: spec.solutionText };
  },
  rewards: {
    passed: { fn: shellPassed, needsRuntime: true },
  },
});
