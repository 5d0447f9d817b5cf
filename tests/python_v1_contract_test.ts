/**
 * Outputs exchangeable with Python verifiers v1 (upstream a60a606): what `vf` writes is
 * what Python's pydantic models load (through the JSON Schemas generated from them, and the
 * real models where python3 + pydantic + an upstream checkout are present), and a run
 * Python's own writer produced is one `vf` runs and resumes.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import process from "node:process";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { ConfigError } from "../kit/errors.ts";
import { taskHash } from "../kit/tasks/hash.ts";
import type { Episode } from "../kit/trace/types.ts";
import { evalInProcess } from "./_eval.ts";
import { assertExchangeable } from "./_python_v1_exchange.ts";
import {
  copyRunDir,
  episodeProblems,
  evalConfigProblems,
  loadSchema,
  PYTHON_GOLDEN_RUN,
  PYTHON_V1_FIXTURES,
  pythonTaskKey,
  realPythonUnavailable,
  regenerate,
  runDirProblems,
  runRealPython,
} from "./_python_v1.ts";
import { FAST, prepare, run, tmp, traceLines } from "./_run.ts";
import { type FakeReply, startFakeOpenAI } from "./fakes/openai_server.ts";
import { runEval } from "../lib/run/run_eval.ts";
import { wireTaskData } from "../lib/rollout/new_trace.ts";
import { episodeJson } from "../kit/trace/wire_json.ts";
import { runCli } from "./_cli.ts";
import { at } from "./_assert.ts";

const FIXTURES = join(import.meta.dirname!, "fixtures");
type Fake = Awaited<ReturnType<typeof startFakeOpenAI>>;

describe("the Python v1 schemas", () => {
  it("record the pinned upstream commit they were generated from", () => {
    for (const name of ["wire_episode", "wire_trace", "eval_config"]) {
      const header = loadSchema(name)["x-upstream"] as { commit: string; model: string };
      assert.match(header.commit, /^a60a606[0-9a-f]{33}$/, name);
      assert.match(header.model, /^verifiers\.v1\./);
    }
  });

  it("accept Python's own golden run and fail when one field is renamed", () => {
    assert.deepEqual(runDirProblems(PYTHON_GOLDEN_RUN), []);
    const line = at(traceLines(PYTHON_GOLDEN_RUN), 0);
    assert.deepEqual(episodeProblems(line), []);
    const renamedTask = JSON.parse(line);
    renamedTask.traces[0].tasks = renamedTask.traces[0].task;
    delete renamedTask.traces[0].task;
    assert.match(
      episodeProblems(JSON.stringify(renamedTask)).join("\n"),
      /required property 'task'/,
    );
    const renamedRetries = JSON.parse(line);
    const retries = renamedRetries.traces[0].agent.config.retries;
    retries.max_retry = retries.max_retries;
    delete retries.max_retries;
    assert.match(episodeProblems(JSON.stringify(renamedRetries)).join("\n"), /max_retry/);
    const config = JSON.parse(
      readFileSync(join(PYTHON_GOLDEN_RUN, "configs", "eval.json"), "utf8"),
    );
    assert.deepEqual(evalConfigProblems(config), []);
    config.num_rollout = config.num_rollouts;
    delete config.num_rollouts;
    assert.match(evalConfigProblems(config).join("\n"), /num_rollout/);
  });

  it("are what the generator writes from the pinned upstream today (schemas and golden run)", () => {
    const why = realPythonUnavailable();
    if (why) {
      console.log(`# skipped regenerating the Python v1 fixtures: ${why}`);
      return;
    }
    const schemas = regenerate("schemas");
    for (const name of readdirSync(PYTHON_V1_FIXTURES).filter((f) => f.endsWith(".json"))) {
      assert.equal(
        readFileSync(join(schemas, name), "utf8"),
        readFileSync(join(PYTHON_V1_FIXTURES, name), "utf8"),
        name,
      );
    }
    const golden = join(regenerate("golden"), "golden", "reverse-text");
    for (const file of ["configs/eval.json", "traces.jsonl", "GENERATED.md"]) {
      assert.equal(
        readFileSync(join(golden, file), "utf8"),
        readFileSync(join(PYTHON_GOLDEN_RUN, file), "utf8"),
        file,
      );
    }
  });

  it("keep task_key(task.data) == task.hash on Python's lines, as our hash computes it", () => {
    for (const line of traceLines(PYTHON_GOLDEN_RUN)) {
      const row = JSON.parse(line);
      assert.equal(pythonTaskKey(row.task.data), row.task.hash);
      assert.equal(taskHash(row.task.data), row.task.hash);
    }
  });
});

describe("vf outputs that Python v1 loads, and Python runs that vf continues", () => {
  let fake: Fake;
  let reply: (body: Record<string, unknown>, index: number) => FakeReply | string;
  const reversed = (body: Record<string, unknown>) => {
    const messages = body.messages as { role: string; content: string }[];
    const prompt = messages.filter((m) => m.role === "user").at(-1)!.content;
    return `<reversed_text>${Array.from(prompt).reverse().join("")}</reversed_text>`;
  };
  before(async () => {
    process.env.VF_TEST_KEY = "sk-contract-secret";
    fake = await startFakeOpenAI({ script: (b, i) => reply(b, i) });
  });
  after(async () => await fake.close());
  const client = () => ["--client.base-url", fake.url, "--client.api-key-var", "VF_TEST_KEY"];

  it("demo config with the oracle: every line and eval.json load in Python", async () => {
    const out = await evalInProcess([
      "@",
      join(import.meta.dirname!, "..", "examples", "quickstart.toml"),
      "-m",
      "oracle",
      "-n",
      "3",
    ]);
    assert.equal(out.episodes.length, 3);
    assertExchangeable(out);
  });

  it("reverse-text against a loopback model, on the `local` alias written as subprocess", async () => {
    reply = (b) => reversed(b);
    const out = await evalInProcess([
      "reverse-text",
      "-n",
      "3",
      "-r",
      "2",
      "-m",
      "m",
      "--env.agent.harness.id",
      "null",
      "--env.agent.runtime.type",
      "local",
      ...client(),
    ]);
    const t = at(at(out.episodes, 0).traces, 0);
    assert.equal(t.agent.runtime.type, "subprocess");
    assert.deepEqual(t.agent.config.runtime, { type: "subprocess" });
    assert.equal(t.task.type, "ReverseTextTask");
    assert.equal(t.rewards.lcs?.score, 1);
    assert.equal(t.verifiers.version, "0.0.0+unknown");
    assert.match(String(t.verifiers.producer), /^verifiers-ts /);
    const config = JSON.parse(readFileSync(join(out.runDir, "configs", "eval.json"), "utf8"));
    assert.equal(config.env.agent.runtime.type, "subprocess");
    for (const k of ["display", "fail_on_error", "lock", "frozen", "seed"]) {
      assert.ok(!(k in config), k);
    }
    const side = JSON.parse(readFileSync(join(out.runDir, "configs", "verifiers-ts.json"), "utf8"));
    assert.equal(side.seed, null);
    assertExchangeable(out, 2);
  });

  it("every model call failing: calls carry Python's Error object, and resume keeps none", async () => {
    reply = () => ({ status: 500, error: "the model fell over" });
    const out = await evalInProcess(["echo", "-n", "2", "-m", "m", ...client()]);
    const call = at(at(at(out.episodes, 0).traces, 0).calls, 0);
    assert.equal(call.error?.type, "ProviderError");
    assert.equal(call.error?.status_code, 500);
    assert.ok(out.episodes.every((e) => !e.ok));
    assertExchangeable(out);
  });

  it("a provider finishing with content_filter: finish_reason null, the native reason kept aside", async () => {
    reply = () => ({ content: "I can't help with that.", finish_reason: "content_filter" });
    const out = await evalInProcess(["echo", "-n", "1", "-m", "m", ...client()]);
    const call = at(at(at(out.episodes, 0).traces, 0).calls, 0);
    assert.equal(call.finish_reason, null);
    assert.equal(call.native_finish_reason, "content_filter");
    assertExchangeable(out);
  });

  it("a tiny episode timeout: TimeoutError, the trace in flight dropped as Python drops it", async () => {
    reply = () => new Promise((r) => setTimeout(() => r({ content: "late" }), 1500)) as never;
    const cwd = tmp();
    const { runDir } = await run(
      ["echo", "-n", "2", "-m", "m", ...client(), "--env.timeout.episode", "0.05"],
      cwd,
      { graceMs: 5000 },
    );
    const episodes = traceLines(runDir).map((l) => JSON.parse(l) as Episode);
    for (const e of episodes) {
      assert.deepEqual(e.traces, []);
      assert.equal(at(e.errors, 0).type, "TimeoutError");
    }
    assertExchangeable({ runDir, episodes });
  });

  it("a judge whose model fails: the trace errors and still loads in Python", async () => {
    reply = (_b, i) => i % 2 === 0 ? "Paris" : { status: 500, error: "judge down" };
    const out = await evalInProcess([
      "jsonl",
      "--env.taskset.path",
      join(FIXTURES, "tasksets", "qa.jsonl"),
      "-n",
      "1",
      "-m",
      "m",
      "--env.agent.harness.id",
      "null",
      "--env.taskset.task.judges",
      JSON.stringify([{ id: "reference" }]),
      ...client(),
    ]);
    assert.equal(at(out.episodes, 0).ok, false);
    assertExchangeable(out);
  });

  it("reverse-text with a reference judge: Python's EvalConfig resolves and accepts the judge", async () => {
    reply = (b, i) => i % 2 === 0 ? reversed(b) : "yes";
    const out = await evalInProcess([
      "reverse-text",
      "-n",
      "1",
      "-m",
      "m",
      "--env.agent.harness.id",
      "null",
      "--env.taskset.task.judges",
      JSON.stringify([{ id: "reference", question_field: "prompt" }]),
      ...client(),
    ]);
    assert.equal(at(out.episodes, 0).ok, true);
    assertExchangeable(out);
  });

  it("runs `vf eval @ <Python's eval.json>`, Python's keys taken in without warnings", async () => {
    reply = (b) => reversed(b);
    const cwd = tmp();
    const p = await prepare(
      ["@", join(PYTHON_GOLDEN_RUN, "configs", "eval.json"), ...client(), "-o", cwd],
      cwd,
    );
    assert.deepEqual(p.loaded.warnings, []);
    assert.equal(p.loaded.config.env.agent.runtime.type, "subprocess");
    assert.equal(p.loaded.config.env.agent.harness.id, "null");
    const { summary } = await runEval(p.loaded, { runDir: p.runDir, cwd });
    assert.equal(summary.counts.episodes, 2);
    assert.deepEqual(runDirProblems(p.runDir), []);
    const golden = traceLines(PYTHON_GOLDEN_RUN).map((l) => JSON.parse(l).task.hash);
    assert.deepEqual(
      traceLines(p.runDir).map((l) => JSON.parse(l).task.hash).sort(),
      golden.sort(),
    );
  });

  it("resumes a run Python wrote: keeps its ok episode byte for byte, reruns only the rest", async () => {
    reply = (b) => reversed(b);
    const dir = copyRunDir(PYTHON_GOLDEN_RUN);
    const [first] = traceLines(dir);
    writeFileSync(join(dir, "traces.jsonl"), first + "\n");
    // As if Python had run against this loopback model (the client is part of the run).
    const configPath = join(dir, "configs", "eval.json");
    const config = JSON.parse(readFileSync(configPath, "utf8"));
    config.client.base_url = fake.url;
    config.client.api_key_var = "VF_TEST_KEY";
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    const p = await prepare(["--resume", dir], dir);
    const before = fake.requests.length;
    await runEval(p.loaded, { runDir: p.runDir, cwd: dir });
    assert.equal(fake.requests.length - before, 1, "only the missing episode is run");
    const lines = traceLines(dir);
    assert.equal(lines.length, 2);
    assert.equal(lines[0], first);
    assert.deepEqual(runDirProblems(dir), []);
  });

  it("refuses each Python setting that changes results, naming it, with exit 2", async () => {
    const cwd = tmp();
    const base = JSON.parse(readFileSync(join(PYTHON_GOLDEN_RUN, "configs", "eval.json"), "utf8"));
    // deno-lint-ignore no-explicit-any
    const refused: [string, (c: Record<string, any>) => void][] = [
      ["env.agent.runtime.allow", (c) => c.env.agent.runtime.allow = ["example.com"]],
      ["env.agent.runtime.block", (c) => c.env.agent.runtime.block = ["example.com"]],
      ["env.agent.harness.skills", (c) => c.env.agent.harness.skills = ["a.md"]],
      ["env.agent.harness.search", (c) => c.env.agent.harness.search = true],
      ["client.type", (c) => c.client.type = "train"],
    ];
    for (const [key, change] of refused) {
      const config = structuredClone(base);
      change(config);
      const path = join(cwd, "py.json");
      writeFileSync(path, JSON.stringify(config));
      await assert.rejects(
        loadEvalConfig(["@", path], { cwd }),
        (e: unknown) => e instanceof ConfigError && e.message.includes(key),
        key,
      );
    }
    const r = await runCli(["eval", "@", join(cwd, "py.json"), "--dry-run"], { cwd });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /client\.type/);
  });

  it("takes tool_timeout and disabled_tools on a harness with tools, refuses them elsewhere", async () => {
    const cwd = tmp();
    const base = JSON.parse(readFileSync(join(PYTHON_GOLDEN_RUN, "configs", "eval.json"), "utf8"));
    base.env.agent.harness.tool_timeout = 30;
    base.env.agent.harness.disabled_tools = ["lookup_get"];
    const path = join(cwd, "py.json");
    writeFileSync(path, JSON.stringify(base));
    const loaded = await loadEvalConfig(["@", path], { cwd });
    const harness = loaded.config.env.agent.harness as Record<string, unknown>;
    assert.equal(harness.tool_timeout, 30);
    assert.deepEqual(harness.disabled_tools, ["lookup_get"]);
    base.env.agent.harness.id = FAST; // a harness without tools
    writeFileSync(path, JSON.stringify(base));
    for (const key of ["tool_timeout", "disabled_tools"]) {
      await assert.rejects(
        loadEvalConfig(["@", path], { cwd }),
        (e: unknown) => e instanceof ConfigError && e.message.includes(`env.agent.harness.${key}`),
        key,
      );
    }
  });

  it("takes Python's per-seat model, client and sampling (env.agent.*) as they are", async () => {
    const cwd = tmp();
    const config = JSON.parse(
      readFileSync(join(PYTHON_GOLDEN_RUN, "configs", "eval.json"), "utf8"),
    );
    config.env.agent.model = "seat-model";
    config.env.agent.client = { type: "eval", base_url: "http://127.0.0.1:9/v1" };
    config.env.agent.sampling = { temperature: 0.25 };
    const path = join(cwd, "py.json");
    writeFileSync(path, JSON.stringify(config));
    const { config: loaded } = await loadEvalConfig(["@", path], { cwd });
    assert.equal(loaded.env.agent.model, "seat-model");
    assert.equal(loaded.env.agent.client?.base_url, "http://127.0.0.1:9/v1");
    assert.equal(loaded.env.agent.client?.api_key_var, null);
    assert.equal(loaded.env.agent.sampling?.temperature, 0.25);
    assert.notEqual(loaded.model, "seat-model");
  });

  it("ignores harmless Python settings with a warning each, and push = true", async () => {
    const cwd = tmp();
    const config = JSON.parse(
      readFileSync(join(PYTHON_GOLDEN_RUN, "configs", "eval.json"), "utf8"),
    );
    config.serve = { pool: { type: "static", workers: 2 }, address: null, max_concurrent: null };
    config.env.interception = { type: "static", multiplex: 8 };
    config.env.max_concurrent_agents = 2;
    config.push = true;
    const path = join(cwd, "py.json");
    writeFileSync(path, JSON.stringify(config));
    const loaded = await loadEvalConfig(["@", path], { cwd });
    const warnings = (loaded.warnings ?? []).join("\n");
    for (const key of ["serve", "env.max_concurrent_agents", "push"]) {
      assert.match(warnings, new RegExp(`${key.replace(".", "\\.")}.*ignored`), key);
    }
    assert.equal(loaded.config.push, false);
    // Python's interception keys are taken, not warned about (docs/interception.md)
    assert.doesNotMatch(warnings, /env\.interception/);
    assert.equal(loaded.config.env.interception.type, "static");
    assert.equal(loaded.config.env.interception.multiplex, 8);
  });

  it("reverse-text accepts only Python's dataset id (its rows are the bundled sentences)", async () => {
    const cwd = tmp();
    await assert.rejects(
      loadEvalConfig(["reverse-text", "-m", "m", "--env.taskset.dataset-name", "me/other"], {
        cwd,
      }),
      (e: unknown) => e instanceof ConfigError && /PrimeIntellect\/Reverse-Text-RL/.test(e.message),
    );
  });

  it("writes an episode without float fields as JSON.stringify does, and marks a trace's own", () => {
    const plain = { prompt: "p", timeout: {}, resources: { gpu: 0 }, answer: 5 };
    const task = { type: "T", data: wireTaskData(plain), key: "k", hash: "h" };
    const episode = { task, traces: [{ task, reward: 1 }], reward: 1.5, n: 2 };
    assert.equal(episodeJson(episode), JSON.stringify(episode));
    const timed = { type: "T", data: wireTaskData({ ...plain, timeout: { agent: 3 } }) };
    const mixed = { task, traces: [{ task }, { task: timed }] };
    const line = episodeJson(mixed);
    assert.match(line, /"timeout":\{"agent":3\.0\}/);
    assert.deepEqual(JSON.parse(line), mixed);
    assert.equal(line.replace('"agent":3.0', '"agent":3'), JSON.stringify(mixed));
  });

  it("writes TaskData's float fields as Python floats, so task_key(task.data) == task.hash", () => {
    const data = { prompt: "p", timeout: { agent: 5, setup: 0.5 }, resources: { cpu: 1 } };
    const task = { type: "T", data: wireTaskData(data), key: taskHash(data), hash: taskHash(data) };
    const line = episodeJson({ task, traces: [{ task }] });
    assert.match(line, /"timeout":\{"agent":5\.0,"setup":0\.5\}/);
    assert.match(line, /"resources":\{"cpu":1\.0\}/);
    const why = realPythonUnavailable();
    if (why) {
      console.log(`# skipped the real Python v1 models check: ${why}`);
      return;
    }
    const answer = at(runRealPython([{ kind: "line_task_key", value: line }]), 0);
    assert.equal(answer.key, taskHash(data));
    assert.ok(answer.ok);
  });
});
