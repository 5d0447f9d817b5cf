import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { mergeConfig } from "../lib/config/merge.ts";
import {
  ConfigError,
  type ErrorCode,
  errorReport,
  InputError,
  PluginError,
} from "../kit/errors.ts";
import process from "node:process";
import { at } from "./_assert.ts";

const FIXTURES = join(import.meta.dirname!, "fixtures");

function tmp(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "vf-config-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function problems(argv: string[], cwd?: string): Promise<string[]> {
  try {
    await loadEvalConfig(argv, cwd === undefined ? {} : { cwd });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  assert.fail("expected a ConfigError");
}

describe("mergeConfig()", () => {
  it("deep-merges dicts with later layers winning per key", () => {
    const out = mergeConfig({ a: { x: 1, y: 2 }, b: 1 }, { a: { y: 3, z: 4 } });
    assert.deepEqual(out, { a: { x: 1, y: 3, z: 4 }, b: 1 });
  });
  it("replaces a subtree whose id or type changes", () => {
    assert.deepEqual(mergeConfig({ t: { id: "a", knob: 1 } }, { t: { id: "b" } }), {
      t: { id: "b" },
    });
    assert.deepEqual(mergeConfig({ r: { type: "x", k: 1 } }, { r: { type: "y", j: 2 } }), {
      r: { type: "y", j: 2 },
    });
    assert.deepEqual(mergeConfig({ t: { id: "a", knob: 1 } }, { t: { id: "a", other: 2 } }), {
      t: { id: "a", knob: 1, other: 2 },
    });
  });
});

describe("loadEvalConfig() layers", () => {
  it("merges defaults < files in order < flags", async () => {
    const dir = tmp({
      "a.toml": 'model = "a"\nnum_rollouts = 2\n[env.agent]\nmax_turns = 3\n',
      "b.toml": 'model = "b"\n[env.agent]\nmax_input_tokens = 100\n',
    });
    const { config } = await loadEvalConfig([
      "echo",
      "@",
      "a.toml",
      "@",
      "b.toml",
      "--env.agent.max-turns",
      "7",
    ], {
      cwd: dir,
    });
    assert.equal(config.model, "b");
    assert.equal(config.num_rollouts, 2);
    assert.equal(config.env.agent.max_turns, 7);
    assert.equal(config.env.agent.max_input_tokens, 100);
    assert.equal(config.max_concurrent, 128);
    assert.equal(config.output_dir, "outputs");
    assert.equal(config.env.agent.runtime.type, "subprocess");
    assert.equal(config.env.agent.harness.id, "bash");
  });

  it("nests a file under a flag path with --a.b @ file", async () => {
    const dir = tmp({ "agent.toml": "max_turns = 5\n[timeout]\nrollout = 30\n" });
    const { config } = await loadEvalConfig(["echo", "-m", "x", "--env.agent", "@", "agent.toml"], {
      cwd: dir,
    });
    assert.equal(config.env.agent.max_turns, 5);
    assert.equal(config.env.agent.timeout.rollout, 30);
  });

  it("reads JSON config files (a saved eval.json re-parses)", async () => {
    const dir = tmp({
      "c.json": JSON.stringify({ model: "j", env: { taskset: { id: "echo" } }, seed: null }),
    });
    const { config } = await loadEvalConfig(["@", "c.json"], { cwd: dir });
    assert.equal(config.model, "j");
    assert.equal(config.env.taskset.id, "echo");
  });

  it("replaces the taskset subtree when a flag changes its id", async () => {
    const dir = tmp({
      "a.toml": '[env.taskset]\nid = "addition"\ndigits = 5\n',
    });
    const { config } = await loadEvalConfig(
      ["@", "a.toml", "-m", "x", "--env.taskset.id", "echo"],
      { cwd: dir },
    );
    assert.equal(config.env.taskset.id, "echo");
    assert.equal((config.env.taskset as Record<string, unknown>).digits, undefined);
    const kept = await loadEvalConfig(["@", "a.toml", "-m", "x"], { cwd: dir });
    assert.equal((kept.config.env.taskset as Record<string, unknown>).digits, 5);
  });
});

describe("loadEvalConfig() flag forms", () => {
  it("accepts kebab, snake and = forms", async () => {
    for (
      const argv of [
        ["--env.agent.max-turns", "4"],
        ["--env.agent.max_turns", "4"],
        ["--env.agent.max-turns=4"],
        ["--env.agent.max_turns=4"],
      ]
    ) {
      const { config } = await loadEvalConfig(["echo", "-m", "x", ...argv]);
      assert.equal(config.env.agent.max_turns, 4, argv.join(" "));
    }
  });

  it("reads booleans as --flag, --no-flag and explicit values", async () => {
    assert.equal((await loadEvalConfig(["echo", "-m", "x", "--shuffle"])).config.shuffle, true);
    assert.equal(
      (await loadEvalConfig(["echo", "-m", "x", "--shuffle", "--no-shuffle"])).config.shuffle,
      false,
    );
    assert.equal(
      (await loadEvalConfig(["echo", "-m", "x", "--shuffle=false"])).config.shuffle,
      false,
    );
    assert.equal((await loadEvalConfig(["echo", "-m", "x", "-s"])).config.shuffle, true);
    assert.equal(
      (await loadEvalConfig(["echo", "-m", "x", "--shuffle", "1"])).config.shuffle,
      true,
    );
  });

  it("reads lists as JSON, as space-separated values and as repeated flags", async () => {
    const p = "--env.agent.retries.include";
    const a = await loadEvalConfig(["echo", "-m", "x", p, '["ProviderError","TaskError"]']);
    const b = await loadEvalConfig(["echo", "-m", "x", p, "ProviderError", "TaskError"]);
    const c = await loadEvalConfig(["echo", "-m", "x", p, "ProviderError", p, "TaskError"]);
    for (const r of [a, b, c]) {
      assert.deepEqual(r.config.env.agent.retries.include, ["ProviderError", "TaskError"]);
    }
  });

  it("reads dicts as JSON and keeps record keys verbatim", async () => {
    const a = await loadEvalConfig(["echo", "-m", "x", "--client.headers", '{"X-Team-Id":"t1"}']);
    assert.deepEqual(a.config.client.headers, { "X-Team-Id": "t1" });
    const b = await loadEvalConfig(["echo", "-m", "x", "--client.headers.X-Team-Id", "t2"]);
    assert.deepEqual(b.config.client.headers, { "X-Team-Id": "t2" });
  });

  it("passes extra provider sampling keys through, typed by JSON", async () => {
    const { config } = await loadEvalConfig([
      "echo",
      "-m",
      "x",
      "--sampling.top_k",
      "5",
      "--sampling.temperature",
      "0.5",
    ]);
    assert.equal(config.sampling.temperature, 0.5);
    assert.equal((config.sampling as Record<string, unknown>).top_k, 5);
  });

  it('turns the string "None" into null, in flags and in files', async () => {
    const dir = tmp({ "a.toml": 'seed = 3\n[env.agent]\nmax_turns = "None"\n' });
    const { config } = await loadEvalConfig(["echo", "-m", "x", "@", "a.toml", "--seed", "None"], {
      cwd: dir,
    });
    assert.equal(config.seed, null);
    assert.equal(config.env.agent.max_turns, null);
  });

  it("expands short and Python aliases", async () => {
    const { config } = await loadEvalConfig(
      ["echo", "-m", "mm", "-n", "3", "-r", "2", "-c", "5", "-v", "-o", "out"],
    );
    assert.deepEqual(
      [
        config.model,
        config.num_tasks,
        config.num_rollouts,
        config.max_concurrent,
        config.verbose,
        config.output_dir,
      ],
      ["mm", 3, 2, 5, true, "out"],
    );
    const py = await loadEvalConfig([
      "echo",
      "--m",
      "a",
      "--n",
      "4",
      "--rollouts-per-example",
      "3",
    ]);
    assert.equal(py.config.num_tasks, 4);
    assert.equal(py.config.num_rollouts, 3);
    const dir = tmp({ "a.toml": 'm = "from-file"\nbatch_size = 9\n' });
    const f = await loadEvalConfig(["echo", "@", "a.toml"], { cwd: dir });
    assert.equal(f.config.model, "from-file");
    assert.equal(f.config.num_tasks, 9);
  });
});

describe("loadEvalConfig() errors", () => {
  it("reports every problem at once, naming flags, with did-you-mean", async () => {
    const got = await problems([
      "echo",
      "-m",
      "x",
      "--env.agent.max-turns",
      "abc",
      "--env.agent.max-turnz",
      "3",
      "--num-task",
      "2",
    ]);
    assert.equal(got.length, 3, got.join("\n"));
    assert.match(at(got, 0), /^--env\.agent\.max-turns: expected an integer, got "abc"/);
    assert.match(
      at(got, 1),
      /unknown flag --env\.agent\.max-turnz \(did you mean --env\.agent\.max-turns\?\)/,
    );
    assert.match(at(got, 2), /unknown flag --num-task \(did you mean --num-tasks\?\)/);
  });

  it("names the file and TOML path of a bad or unknown key, with a suggestion", async () => {
    const dir = tmp({ "a.toml": "[env.agent]\nmax_turns = 0\nmax_turnz = 3\n" });
    const got = await problems(["echo", "-m", "x", "@", "a.toml"], dir);
    assert.ok(
      got.some((p) => /^a\.toml: env\.agent\.max_turns: Too small/.test(p)),
      got.join("\n"),
    );
    assert.ok(
      got.some((p) =>
        p === 'a.toml: env.agent.max_turnz: unknown key "max_turnz" (did you mean "max_turns"?)'
      ),
      got.join("\n"),
    );
  });

  it("says a group path given a value is a group and lists its fields", async () => {
    const got = await problems(["echo", "-m", "x", "--env.agent.timeout", "5"]);
    assert.match(
      at(got, 0),
      /--env\.agent\.timeout is a config group, not a leaf field\. Try one of: .*--env\.agent\.timeout\.rollout/,
    );
  });

  it("gives file:line:column for TOML syntax errors", async () => {
    const dir = tmp({ "bad.toml": 'model = "x"\n[env\nid = 1\n' });
    const got = await problems(["echo", "@", "bad.toml"], dir);
    assert.match(at(got, 0), /^bad\.toml:2:\d+: invalid TOML/);
  });

  it("refuses the same id given twice with different values, positional included", async () => {
    const got = await problems(["echo", "-m", "x", "--env.taskset.id", "reverse-text"]);
    assert.match(
      at(got, 0),
      /env\.taskset\.id given twice with different values.*positional <taskset-id> shorthand/,
    );
    const h = await problems([
      "echo",
      "-m",
      "x",
      "--env.agent.harness.id",
      "bash",
      "--env.agent.harness.id=null",
    ]);
    assert.match(at(h, 0), /env\.agent\.harness\.id given twice/);
    const same = await loadEvalConfig(["echo", "-m", "x", "--env.taskset.id", "echo"]);
    assert.equal(same.config.env.taskset.id, "echo");
  });

  it("requires a taskset and a model", async () => {
    const got = await problems(["-m", "x"]);
    assert.ok(got.some((p) => p.startsWith("no taskset")));
    const m = await problems(["echo"]);
    assert.ok(m.some((p) => p.startsWith("no model")));
  });

  it("raises PluginError for an unknown taskset id", async () => {
    await assert.rejects(() => loadEvalConfig(["no-such-taskset", "-m", "x"]), (e: unknown) => {
      assert.ok(e instanceof PluginError);
      assert.equal(e.exitCode, 2);
      return true;
    });
  });
});

describe("loadEvalConfig() narrowing", () => {
  it("types taskset knobs against the taskset an id flag names", async () => {
    const ok = await loadEvalConfig(["addition", "-m", "x", "--env.taskset.digits", "4"]);
    assert.equal((ok.config.env.taskset as Record<string, unknown>).digits, 4);
    const bad = await problems(["echo", "-m", "x", "--env.taskset.digits", "4"]);
    assert.match(at(bad, 0), /unknown flag --env\.taskset\.digits/);
  });

  it("types taskset knobs against the taskset a TOML id names", async () => {
    const dir = tmp({
      "ok.toml": '[env.taskset]\nid = "addition"\ndigits = 2\n',
      "bad.toml": '[env.taskset]\nid = "echo"\ndigits = 2\n',
    });
    const ok = await loadEvalConfig(["-m", "x", "@", "ok.toml"], { cwd: dir });
    assert.equal((ok.config.env.taskset as Record<string, unknown>).digits, 2);
    const bad = await problems(["-m", "x", "@", "bad.toml"], dir);
    assert.match(at(bad, 0), /^bad\.toml: env\.taskset\.digits: unknown key "digits"/);
  });

  it("narrows a local plugin file, the harness, the runtime and each judge", async () => {
    const knob = join(FIXTURES, "plugins", "knob_taskset.ts");
    const { config, plugins } = await loadEvalConfig([knob, "-m", "x", "--env.taskset.knob", "9"]);
    assert.equal(plugins.taskset?.id, "knob-set");
    assert.equal((config.env.taskset as Record<string, unknown>).knob, 9);
    const dir = tmp({
      "j.toml":
        '[[env.taskset.task.judges]]\nid = "match"\nmode = "exact"\n[[env.taskset.task.judges]]\nid = "match"\nname = "m2"\nmodd = 1\n',
    });
    const got = await problems(["echo", "-m", "x", "@", "j.toml"], dir);
    assert.equal(got.length, 1, got.join("\n"));
    assert.match(
      at(got, 0),
      /^j\.toml: env\.taskset\.task\.judges\.1\.modd: unknown key "modd" \(did you mean "mode"\?\)/,
    );
    const r = await problems(["echo", "-m", "x", "--env.agent.runtime.keep-workdirr", "1"]);
    assert.match(at(r, 0), /did you mean --env\.agent\.runtime\.keep-workdir/);
  });

  it("refuses judges that share a reward key", async () => {
    const dir = tmp({
      "j.toml":
        '[[env.taskset.task.judges]]\nid = "match"\n[[env.taskset.task.judges]]\nid = "match"\n',
    });
    const got = await problems(["echo", "-m", "x", "@", "j.toml"], dir);
    assert.match(at(got, 0), /judges 0 and 1 share a reward key "match"/);
  });
});

describe("loadEvalConfig() purity and structured problems", () => {
  it("takes an unset base URL from the env option only: loading reads no environment", async () => {
    const saved = process.env.OPENAI_BASE_URL;
    process.env.OPENAI_BASE_URL = "http://127.0.0.1:9/v1";
    try {
      const plain = await loadEvalConfig(["echo", "-m", "x"]);
      assert.equal(plain.config.client.base_url, "https://api.openai.com/v1");
      const given = await loadEvalConfig(["echo", "-m", "x"], {
        env: { OPENAI_BASE_URL: "http://example.test/v1" },
      });
      assert.equal(given.config.client.base_url, "http://example.test/v1");
      const set = await loadEvalConfig(["echo", "-m", "x", "--client.base-url", "http://a.test"], {
        env: { OPENAI_BASE_URL: "http://example.test/v1" },
      });
      assert.equal(set.config.client.base_url, "http://a.test");
      await assert.rejects(
        loadEvalConfig(["echo", "-m", "x"], { env: { OPENAI_BASE_URL: "nope" } }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.message === 'OPENAI_BASE_URL: "nope" is not a URL (expected http:// or https://...)' &&
          e.issues[0]?.path === "OPENAI_BASE_URL",
      );
    } finally {
      if (saved === undefined) delete process.env.OPENAI_BASE_URL;
      else process.env.OPENAI_BASE_URL = saved;
    }
  });

  it("keeps each problem as data (where, what) and renders the same lines", async () => {
    const dir = tmp({ "a.toml": "num_rollouts = 0\n[env.agent]\nmax_turnz = 3\n" });
    const err = await loadEvalConfig(["echo", "@", "a.toml", "--shuffle", "maybe"], { cwd: dir })
      .then(() => null, (e: unknown) => e);
    assert.ok(err instanceof ConfigError);
    assert.deepEqual(err.problems, err.message.split("\n"));
    const paths = err.issues.map((i) => i.path).sort();
    assert.deepEqual(paths, ["--shuffle", "a.toml: env.agent.max_turnz", "a.toml: num_rollouts"]);
    const shuffle = err.issues.find((i) => i.path === "--shuffle");
    assert.equal(shuffle?.message, 'expected true or false, got "maybe"');
    const report = errorReport(err);
    assert.equal(report.code, "config_invalid");
    assert.equal(report.exit_code, 2);
    assert.deepEqual(JSON.parse(JSON.stringify(report)).issues, err.issues);
  });

  it("lists every error code in one union the compiler checks", () => {
    // @ts-expect-error: a code missing from ErrorCode does not type-check
    const made = new InputError("no_such_code", "x");
    assert.equal(made.code, "no_such_code");
    const codes: ErrorCode[] = ["config_invalid", "plugin_not_found"];
    assert.equal(codes.length, 2);
  });
});
