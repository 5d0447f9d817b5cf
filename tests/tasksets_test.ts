import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { cwd } from "node:process";
import { after, describe, it } from "node:test";
import { InputError, TaskError } from "../kit/errors.ts";
import type { ConfigSchema, HookContext, TasksetConfig, TasksetPlugin } from "../kit/contract.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import { sequenceRatio } from "../kit/scoring/sequence_matcher.ts";
import { taskHash } from "../kit/tasks/hash.ts";
import type { TaskData } from "../kit/tasks/task_data.ts";
import { TasksetView } from "../kit/taskset_view.ts";
import type { Trace } from "../kit/trace/types.ts";
import addition from "../plugins/tasksets/addition/mod.ts";
import echo, { ECHO_PHRASES, ECHO_SYSTEM_PROMPT } from "../plugins/tasksets/echo/mod.ts";
import jsonl from "../plugins/tasksets/jsonl/mod.ts";
import reverseText from "../plugins/tasksets/reverse-text/mod.ts";
import shellBasics from "../plugins/tasksets/shell-basics/mod.ts";
import { SHELL_TASKS } from "../plugins/tasksets/shell-basics/tasks.ts";
import local from "../plugins/runtimes/local/mod.ts";
import { hookContext, traceWithMessages, traceWithReply } from "./_trace_helpers.ts";
import { at, defined } from "./_assert.ts";

const FIXTURES = resolve(
  decodeURIComponent(new URL("./fixtures/tasksets/", import.meta.url).pathname),
);

/** Resolved config: the plugin's defaults plus `overrides` (as the framework would pass it). */
function configOf<S extends ConfigSchema>(
  plugin: TasksetPlugin<S>,
  overrides: Record<string, unknown> = {},
): TasksetConfig<S> {
  const own = plugin.config.parse(overrides);
  return { id: plugin.id, system_prompt: null, ...own } as TasksetConfig<S>;
}

async function tasksOf(
  plugin: TasksetPlugin,
  overrides: Record<string, unknown> = {},
  n?: number,
): Promise<TaskData[]> {
  const view = new TasksetView(plugin, configOf(plugin, overrides));
  return await (n === undefined ? view : view.head(n)).toArray();
}

/** Runs one reward hook of a taskset. */
async function reward(plugin: TasksetPlugin, name: string, ctx: HookContext): Promise<unknown> {
  const hook = plugin.rewards?.[name];
  assert.ok(hook, `${plugin.id} has reward '${name}'`);
  return await hook.fn(ctx);
}

function solutionText(plugin: TasksetPlugin, task: TaskData): string {
  const text = plugin.solution?.(task, configOf(plugin)).text;
  assert.equal(typeof text, "string", `${plugin.id} has a solution text`);
  return text!;
}

/** Loads twice and checks the tasks and their hashes are identical (hashing is stable). */
async function assertStableHashes(
  plugin: TasksetPlugin,
  overrides: Record<string, unknown> = {},
  n?: number,
) {
  const a = await tasksOf(plugin, overrides, n);
  const b = await tasksOf(plugin, overrides, n);
  assert.deepEqual(a.map((t) => taskHash(t)), b.map((t) => taskHash(t)));
  assert.equal(new Set(a.map((t) => taskHash(t))).size, a.length, "hashes are unique");
}

describe("echo taskset", () => {
  it("loads the three phrases with the echo system prompt and echo:<answer> keys", async () => {
    const tasks = await tasksOf(echo);
    assert.deepEqual(tasks.map((t) => t.prompt), [...ECHO_PHRASES]);
    assert.deepEqual(tasks.map((t) => t.answer), ["hello world", "ping", "verifiers"]);
    for (const t of tasks) assert.equal(t.system_prompt, ECHO_SYSTEM_PROMPT);
    assert.deepEqual(tasks.map((t) => echo.key!(t)), [
      "echo:hello world",
      "echo:ping",
      "echo:verifiers",
    ]);
    assert.equal(echo.needsContainer, false);
    await assertStableHashes(echo);
  });

  it("rewards an echo (leniently) with 1 and anything else with 0", async () => {
    const task = at(await tasksOf(echo), 0);
    assert.equal(
      await reward(echo, "echoed", hookContext(task, traceWithReply(solutionText(echo, task)))),
      1,
    );
    assert.equal(
      await reward(echo, "echoed", hookContext(task, traceWithReply("Hello, World!"))),
      1,
    );
    assert.equal(await reward(echo, "echoed", hookContext(task, traceWithReply("goodbye"))), 0);
    assert.equal(
      await reward(
        echo,
        "echoed",
        hookContext(task, traceWithMessages([{ role: "user", content: "hello world" }])),
      ),
      0,
    );
  });

  it("stops after one model turn", async () => {
    const task = at(await tasksOf(echo), 0);
    const hook = defined(echo.stops?.single_turn, "echo's single_turn stop");
    if (hook.on === "request" || hook.on === "response") assert.fail("a trace stop");
    const stop = hook.fn;
    assert.equal(
      await stop(hookContext(task, traceWithMessages([{ role: "user", content: "x" }]))),
      false,
    );
    assert.equal(await stop(hookContext(task, traceWithReply("x"))), true);
  });

  it("takes the config's system prompt override", async () => {
    const tasks = await new TasksetView(echo, { ...configOf(echo), system_prompt: "S" }).toArray();
    for (const t of tasks) assert.equal(t.system_prompt, "S");
  });
});

describe("reverse-text taskset", () => {
  it("loads about twenty sentences whose answers are their reversals", async () => {
    const tasks = await tasksOf(reverseText);
    assert.ok(tasks.length >= 20);
    for (const t of tasks) {
      assert.equal(typeof t.prompt, "string");
      assert.equal(Array.from(t.answer as string).reverse().join(""), t.prompt);
      assert.match(String(t.system_prompt), /<reversed_text>/);
    }
    await assertStableHashes(reverseText);
  });

  it("scores the LCS ratio of the <reversed_text> content", async () => {
    const task = at(await tasksOf(reverseText), 0);
    const answer = String(task.answer);
    const lcs = (reply: string) =>
      reward(reverseText, "lcs", hookContext(task, traceWithReply(reply)));
    assert.equal(await lcs(solutionText(reverseText, task)), 1);
    assert.equal(await lcs(answer), 0, "no tags: empty answer");
    assert.equal(await lcs("<reversed_text>0123456789</reversed_text>"), 0);
    const partial = `<reversed_text>${answer.slice(0, 20)}</reversed_text>`;
    assert.equal(await lcs(partial), sequenceRatio(answer.slice(0, 20), answer));
    assert.ok((await lcs(partial) as number) > 0 && (await lcs(partial) as number) < 1);
  });
});

describe("addition taskset", () => {
  it("is infinite and refuses to shuffle unbounded", () => {
    assert.equal(addition.infinite, true);
    const view = new TasksetView(addition, configOf(addition));
    assert.equal(view.infinite, true);
    assert.throws(() => view.shuffle(), /addition is infinite - cannot shuffle/);
  });

  it("generates seeded questions with digits-digit operands and their sum", async () => {
    const tasks = await tasksOf(addition, {}, 50);
    assert.deepEqual(tasks.map((t) => t.idx), Array.from({ length: 50 }, (_, i) => i));
    for (const t of tasks) {
      const m = /^What is (\d+) \+ (\d+)\?$/.exec(String(t.prompt));
      assert.ok(m, String(t.prompt));
      const [a, b] = [Number(m[1]), Number(m[2])];
      assert.ok(a >= 100 && a <= 999 && b >= 100 && b <= 999);
      assert.equal(t.answer, String(a + b));
    }
    const again = await tasksOf(addition, { seed: 0 }, 50);
    assert.deepEqual(again, tasks);
    const other = await tasksOf(addition, { seed: 1 }, 50);
    assert.notDeepEqual(other.map((t) => t.prompt), tasks.map((t) => t.prompt));
    const big = await tasksOf(addition, { digits: 6 }, 20);
    for (const t of big) assert.match(String(t.prompt), /^What is \d{6} \+ \d{6}\?$/);
    const one = await tasksOf(addition, { digits: 1 }, 20);
    for (const t of one) assert.match(String(t.prompt), /^What is \d \+ \d\?$/);
    await assertStableHashes(addition, {}, 50);
  });

  it("rewards the right sum as the reply's last number", async () => {
    const task = at(await tasksOf(addition, {}, 1), 0);
    const answer = Number(task.answer);
    const correct = (reply: string) =>
      reward(addition, "correct", hookContext(task, traceWithReply(reply)));
    assert.equal(await correct(solutionText(addition, task)), 1);
    assert.equal(await correct(`The sum is ${answer}.`), 1);
    assert.equal(await correct(`${answer + 1}`), 0);
    assert.equal(await correct(`${answer}, no wait, ${answer - 1}`), 0);
    assert.equal(await correct("I cannot add"), 0);
  });
});

describe("jsonl taskset", () => {
  it("requires a path", () => {
    assert.equal(jsonl.config.safeParse({}).success, false);
    assert.deepEqual(jsonl.config.parse({ path: "x.jsonl" }), {
      path: "x.jsonl",
      prompt_field: "prompt",
      answer_field: "answer",
      system_field: "system_prompt",
    });
  });

  it("reads a .jsonl file, skipping blank lines and keeping extra fields", async () => {
    const tasks = await tasksOf(jsonl, { path: resolve(FIXTURES, "qa.jsonl") });
    assert.deepEqual(tasks, [
      { prompt: "What is the capital of France?", answer: "Paris", difficulty: "easy", idx: 0 },
      {
        prompt: "Name a primary color.",
        answer: ["red", "blue", "yellow"],
        system_prompt: "Answer in one word.",
        tags: ["colors"],
        idx: 1,
      },
      { idx: 42, prompt: [{ role: "user", content: "What is 6 x 7?" }], answer: 42 },
    ]);
    assert.deepEqual(tasks.map((t) => jsonl.solution!(t, configOf(jsonl, { path: "x.jsonl" }))), [
      { text: "Paris" },
      { text: "red" },
      { text: "42" },
    ]);
    assert.equal(jsonl.rewards, undefined);
    await assertStableHashes(jsonl, { path: resolve(FIXTURES, "qa.jsonl") });
  });

  it("reads a .json array with custom field names, relative to the working directory", async () => {
    const path = relative(cwd(), resolve(FIXTURES, "qa.json"));
    assert.ok(!path.startsWith("/"));
    const tasks = await tasksOf(jsonl, {
      path,
      prompt_field: "question",
      answer_field: "gold",
      system_field: "sys",
    });
    assert.deepEqual(tasks, [
      {
        prompt: "Largest planet?",
        answer: "Jupiter",
        system_prompt: "Be brief.",
        source: "astro",
        idx: 0,
      },
      { prompt: "Smallest planet?", answer: "Mercury", idx: 1 },
    ]);
  });

  it("names the file and line of a bad row", async () => {
    const bad = resolve(FIXTURES, "bad_line.jsonl");
    await assert.rejects(
      tasksOf(jsonl, { path: bad }),
      (e: unknown) => e instanceof InputError && e.message.startsWith(`${bad}:3: invalid JSON`),
    );
    const missing = resolve(FIXTURES, "missing_prompt.jsonl");
    await assert.rejects(
      tasksOf(jsonl, { path: missing }),
      (e: unknown) =>
        e instanceof InputError && e.message === `${missing}:2: row has no 'prompt' field`,
    );
    await assert.rejects(
      tasksOf(jsonl, { path: resolve(FIXTURES, "not_array.json") }),
      /expected a JSON array/,
    );
    await assert.rejects(
      tasksOf(jsonl, { path: resolve(FIXTURES, "nope.jsonl") }),
      (e: unknown) =>
        e instanceof InputError && e.code === "taskset_file_missing" &&
        e.message.includes("nope.jsonl"),
    );
  });

  it("carries a row's image, workdir, resources and network policy as given, and names bad ones", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-jsonl-runtime-"));
    try {
      const row = {
        prompt: "p",
        image: "img:1",
        workdir: "/w",
        resources: { cpu: 2, memory: 0.5, gpu: "A100:2", disk: null },
        network_allow: ["a.com"],
        network_block: [],
      };
      writeFileSync(join(dir, "ok.jsonl"), JSON.stringify(row));
      const [task] = await tasksOf(jsonl, { path: join(dir, "ok.jsonl") });
      assert.deepEqual(task, { ...row, idx: 0 });
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ image: 3 }, /'image' must be a non-empty string/],
        [{ workdir: "rel" }, /'workdir' must be an absolute path/],
        [{ resources: { ram: 1 } }, /unknown key 'ram'/],
        [{ resources: { memory: "1g" } }, /must be numbers/],
        [{ resources: { gpu: 2 } }, /'resources.gpu' must be a GPU spec/],
        [{ network_allow: "a.com" }, /'network_allow' must be a list/],
      ];
      for (const [fields, pattern] of bad) {
        const path = join(dir, "bad.jsonl");
        writeFileSync(path, JSON.stringify({ prompt: "p", ...fields }));
        await assert.rejects(
          tasksOf(jsonl, { path }),
          (e: unknown) =>
            e instanceof InputError && e.message.startsWith(`${path}:1: `) &&
            pattern.test(e.message),
          JSON.stringify(fields),
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A started `local` runtime; every runtime made is stopped after the suite. */
const runtimes: Runtime[] = [];
async function freshRuntime(name: string): Promise<Runtime> {
  const rt = local.create({}, { name });
  runtimes.push(rt);
  await rt.start();
  return rt;
}

function shellContext(task: TaskData, trace: Trace, runtime: Runtime | null): HookContext {
  return hookContext(task, trace, runtime);
}

describe("shell-basics taskset", () => {
  after(async () => {
    for (const rt of runtimes) await rt.stop();
  });

  it("loads about ten named tasks with prompts, keys and solutions", async () => {
    const tasks = await tasksOf(shellBasics);
    assert.equal(tasks.length, SHELL_TASKS.length);
    assert.ok(tasks.length >= 10);
    assert.equal(new Set(tasks.map((t) => t.name)).size, tasks.length);
    assert.equal(new Set(tasks.map((t) => shellBasics.key!(t))).size, tasks.length);
    assert.equal(shellBasics.needsContainer, false);
    for (const t of tasks) {
      const sol = shellBasics.solution!(t, configOf(shellBasics));
      assert.ok(sol.commands && sol.commands.length > 0, `${String(t.name)} has commands`);
      assert.equal(typeof sol.text, "string");
    }
    await assertStableHashes(shellBasics);
  });

  it("needs a runtime for setup and for its reward", async () => {
    const task = at(await tasksOf(shellBasics), 0);
    await assert.rejects(
      shellBasics.setup!(shellContext(task, traceWithReply(""), null)),
      TaskError,
    );
    await assert.rejects(
      reward(shellBasics, "passed", shellContext(task, traceWithReply(""), null)),
      TaskError,
    );
  });

  for (const spec of SHELL_TASKS) {
    it(`${spec.name}: the solution passes, doing nothing fails`, async () => {
      const task = (await tasksOf(shellBasics)).find((t) => t.name === spec.name)!;
      const solution = shellBasics.solution!(task, configOf(shellBasics));

      const solved = await freshRuntime(`solved-${spec.name}`);
      await shellBasics.setup!(shellContext(task, traceWithReply(""), solved));
      let output = "";
      for (const cmd of solution.commands!) {
        const r = await solved.run(["bash", "-c", cmd]);
        assert.equal(r.exitCode, 0, `${cmd}: ${r.stderr}`);
        output += r.stdout;
      }
      if (spec.answer !== undefined) {
        assert.match(output, new RegExp(`\\b${spec.answer}\\b`), "commands reveal the answer");
      }
      assert.equal(
        await reward(
          shellBasics,
          "passed",
          shellContext(task, traceWithReply(solution.text!), solved),
        ),
        1,
      );

      const idle = await freshRuntime(`idle-${spec.name}`);
      await shellBasics.setup!(shellContext(task, traceWithReply(""), idle));
      assert.equal(
        await reward(
          shellBasics,
          "passed",
          shellContext(task, traceWithReply("I could not do it."), idle),
        ),
        0,
      );

      if (spec.answer !== undefined) {
        // The work alone is not enough when the task asks a question.
        assert.equal(
          await reward(shellBasics, "passed", shellContext(task, traceWithReply("Done."), solved)),
          0,
        );
      }
    });
  }
});
