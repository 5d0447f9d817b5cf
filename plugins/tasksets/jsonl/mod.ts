/**
 * The `jsonl` taskset: tasks from a local file, one JSON object per line (`.jsonl`, blank
 * lines skipped) or a JSON array (`.json`). Each row's `prompt_field` becomes `prompt`,
 * `answer_field` becomes `answer` and `system_field` becomes `system_prompt`; every other
 * field is kept as is. A row without `idx` gets its row position. No rewards of its own:
 * score it with judges (`match`, `reference`, `rubric`). A relative `path` is resolved
 * against the process working directory.
 *
 * @module
 */
import { resolve } from "node:path";
import { cwd } from "node:process";
import { z } from "zod";
import {
  defineTaskset,
  InputError,
  MAX_TASKSET_FILE_BYTES,
  readTextFileBounded,
  type TaskData,
} from "../../../kit/mod.ts";

/** The `jsonl` taskset's own config keys. */
const jsonlConfig = z.object({
  path: z.string().min(1).describe(
    "Local .jsonl file (one JSON object per line) or .json file (an array of objects); " +
      "relative paths resolve against the working directory",
  ),
  prompt_field: z.string().min(1).default("prompt").describe(
    "Row field holding the prompt (a string or a list of chat messages)",
  ),
  answer_field: z.string().min(1).default("answer").describe(
    "Row field holding the reference answer (optional per row)",
  ),
  system_field: z.string().min(1).default("system_prompt").describe(
    "Row field holding the system prompt (optional per row)",
  ),
});

/** The resolved config of the `jsonl` taskset. */
export type JsonlConfig = z.infer<typeof jsonlConfig>;

interface Row {
  where: string;
  value: unknown;
}

function parseRows(text: string, file: string): Row[] {
  if (file.toLowerCase().endsWith(".json")) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      throw new InputError(
        "taskset_file_invalid",
        `${file}: invalid JSON: ${(err as Error).message}`,
      );
    }
    if (!Array.isArray(value)) {
      throw new InputError(
        "taskset_file_invalid",
        `${file}: expected a JSON array of task objects`,
        {
          hint: "use a .jsonl file for one object per line",
        },
      );
    }
    return value.map((v, i) => ({ where: `${file}[${i}]`, value: v }));
  }
  const rows: Row[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (line === "") continue;
    try {
      rows.push({ where: `${file}:${i + 1}`, value: JSON.parse(line) });
    } catch (err) {
      throw new InputError(
        "taskset_file_invalid",
        `${file}:${i + 1}: invalid JSON: ${(err as Error).message}`,
        {
          hint: "each non-blank line must be one JSON object",
        },
      );
    }
  }
  return rows;
}

function toTask(row: Row, position: number, cfg: JsonlConfig): TaskData {
  const v = row.value;
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    throw new InputError("taskset_file_invalid", `${row.where}: expected a JSON object`);
  }
  const fields: Record<string, unknown> = { ...(v as Record<string, unknown>) };
  const prompt = fields[cfg.prompt_field];
  if (typeof prompt !== "string" && !Array.isArray(prompt)) {
    throw new InputError(
      "taskset_file_invalid",
      prompt === undefined
        ? `${row.where}: row has no '${cfg.prompt_field}' field`
        : `${row.where}: '${cfg.prompt_field}' must be a string or a list of messages`,
      { hint: "set prompt_field to the field that holds the prompt" },
    );
  }
  if (Array.isArray(prompt)) {
    const bad = prompt.findIndex((m) =>
      m === null || typeof m !== "object" || Array.isArray(m) ||
      typeof (m as { role?: unknown }).role !== "string"
    );
    if (bad >= 0) {
      throw new InputError(
        "taskset_file_invalid",
        `${row.where}: '${cfg.prompt_field}' item ${bad} is not a chat message ` +
          `(expected an object with a string "role"), got ${
            JSON.stringify(prompt[bad]).slice(0, 80)
          }`,
        { hint: 'a list prompt holds messages like {"role": "user", "content": "..."}' },
      );
    }
  }
  const task: TaskData = { prompt: prompt as TaskData["prompt"] };
  const moved = new Map<string, string>([
    [cfg.prompt_field, "prompt"],
    [cfg.answer_field, "answer"],
    [cfg.system_field, "system_prompt"],
  ]);
  for (const [from, to] of moved) {
    if (from in fields) {
      task[to] = fields[from];
      delete fields[from];
    }
  }
  const out: TaskData = { ...fields, ...task };
  if (out.idx === undefined || out.idx === null) out.idx = position;
  const bad = runtimeFieldProblem(out);
  if (bad) throw new InputError("taskset_file_invalid", `${row.where}: ${bad}`);
  return out;
}

const isNumberOrNull = (v: unknown) => v === undefined || v === null || typeof v === "number";
const isStringList = (v: unknown) =>
  v === undefined || (Array.isArray(v) && v.every((x) => typeof x === "string"));

/**
 * What is wrong with a row's runtime fields (Python `TaskData`: image, workdir, resources,
 * network_allow, network_block), or null; the values themselves are kept as given (they
 * are part of the task hash).
 */
function runtimeFieldProblem(t: TaskData): string | null {
  if (t.image !== undefined && t.image !== null && (typeof t.image !== "string" || !t.image)) {
    return "'image' must be a non-empty string or null";
  }
  if (
    t.workdir !== undefined && t.workdir !== null &&
    (typeof t.workdir !== "string" || !t.workdir.startsWith("/"))
  ) return "'workdir' must be an absolute path or null";
  const r = t.resources as unknown;
  if (r !== undefined && r !== null) {
    if (typeof r !== "object" || Array.isArray(r)) return "'resources' must be an object";
    const res = r as Record<string, unknown>;
    for (const k of Object.keys(res)) {
      if (!["cpu", "memory", "gpu", "disk"].includes(k)) {
        return `'resources' has an unknown key '${k}' (cpu, memory, gpu, disk)`;
      }
    }
    if (![res.cpu, res.memory, res.disk].every(isNumberOrNull)) {
      return "'resources' cpu, memory and disk must be numbers (cores, GB, GB) or null";
    }
    if (![undefined, null].includes(res.gpu as null) && typeof res.gpu !== "string") {
      return '\'resources.gpu\' must be a GPU spec string ("A100", "A100:2", "2") or null';
    }
  }
  if (!isStringList(t.network_allow)) return "'network_allow' must be a list of strings";
  if (!isStringList(t.network_block)) return "'network_block' must be a list of strings";
  return null;
}

/** Reads the tasks of a `jsonl` taskset config (the file is read in one bounded pass). */
function loadJsonl(config: JsonlConfig): Promise<TaskData[]> {
  // a throw inside the executor rejects the promise: callers never see a synchronous throw
  return new Promise((done) => done(readJsonlTasks(config)));
}

function readJsonlTasks(cfg: JsonlConfig): TaskData[] {
  const file = resolve(cwd(), cfg.path);
  const text = readTextFileBounded(file, {
    shownAs: cfg.path,
    what: "jsonl taskset file",
    maxBytes: MAX_TASKSET_FILE_BYTES,
    unreadableCode: "taskset_file_missing",
    hint: "check the taskset's path (relative paths resolve against the working directory)",
  });
  return parseRows(text, file).map((row, i) => toTask(row, i, cfg));
}

/** The text of an answer for the oracle: a string as is, a number as text, a list's first item. */
function answerSolution(answer: unknown): string | undefined {
  const a = Array.isArray(answer) ? answer[0] : answer;
  if (a === undefined || a === null) return undefined;
  return typeof a === "string" ? a : typeof a === "object" ? JSON.stringify(a) : String(a);
}

/** The `jsonl` taskset plugin. */
export default defineTaskset({
  id: "jsonl",
  description: "Tasks from a local .jsonl/.json file (score them with judges)",
  config: jsonlConfig,
  needsContainer: false,
  load: loadJsonl,
  solution(task) {
    const text = answerSolution(task.answer);
    return text === undefined ? {} : { text };
  },
});
