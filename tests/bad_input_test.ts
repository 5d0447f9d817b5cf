/**
 * Bad input, table-driven: every flag, config file and taskset file here is wrong in its own
 * way. Each must end `vf eval` with exit code 2 and one clear message naming the problem —
 * no stack trace, no unbounded read (devices like /dev/zero included), and nothing written
 * outside the output directory.
 */
import "./_builtins.ts";
import assert from "node:assert/strict";
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, it } from "node:test";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { ConfigError } from "../kit/errors.ts";
import { runCli } from "./_cli.ts";
import { tmp } from "./_run.ts";

/** One bad input: the arguments (given the case's directory) and what the message says. */
interface Case {
  name: string;
  /** Files to create in the working directory first (name → content). */
  files?: Record<string, string | Uint8Array>;
  args: (dir: string) => string[];
  /** The message must match this. */
  expect: RegExp;
  /** The hint must match this (it must fit the error). */
  hint?: RegExp;
}

const BASE = ["eval", "echo", "-m", "oracle"];
const DRY = [...BASE, "--dry-run"];

function nested(depth: number): string {
  return `{"x": ${'{"a": '.repeat(depth)}1${"}".repeat(depth)}}`;
}

const CASES: Case[] = [
  {
    name: "--toString 1",
    args: () => [...DRY, "--toString", "1"],
    expect: /unknown flag --toString/,
  },
  {
    name: "--constructor",
    args: () => [...DRY, "--constructor"],
    expect: /unknown flag --constructor/,
  },
  {
    name: "--hasOwnProperty",
    args: () => [...DRY, "--hasOwnProperty"],
    expect: /unknown flag --hasOwnProperty/,
  },
  { name: "--valueOf", args: () => [...DRY, "--valueOf"], expect: /unknown flag --valueOf/ },
  {
    name: "--__proto__.polluted 1",
    args: () => [...DRY, "--__proto__.polluted", "1"],
    expect: /unknown flag --__proto__\.polluted/,
  },
  {
    name: "a __proto__ key inside a JSON flag value",
    args: () => [...DRY, "--client.headers", '{"__proto__": {"x": "1"}, "constructor": "y"}'],
    expect: /--client\.headers: "__proto__" cannot be a config key/,
  },
  {
    name: "TOML keys __proto__ and constructor",
    files: { "proto.toml": "__proto__ = { polluted = 1 }\n[constructor]\nx = 1\n" },
    args: () => ["eval", "echo", "@", "proto.toml", "-m", "oracle", "--dry-run"],
    expect: /proto\.toml: __proto__: "__proto__" cannot be a config key/,
  },
  {
    name: "JSON config nested 4,000 deep",
    files: { "deep.json": nested(4000) },
    args: () => ["eval", "echo", "@", "deep.json", "-m", "oracle", "--dry-run"],
    expect: /deep\.json: config is nested more than 64 levels deep/,
  },
  {
    name: "TOML config nested 4,000 deep",
    files: { "deep.toml": `x = ${"[".repeat(4000)}${"]".repeat(4000)}\n` },
    args: () => ["eval", "echo", "@", "deep.toml", "-m", "oracle", "--dry-run"],
    expect: /deep\.toml:1:\d+: invalid TOML: .*nested/,
  },
  {
    name: "a flag value nested 4,000 deep",
    args: () => [...DRY, "--sampling", nested(4000)],
    expect: /--sampling: value is nested more than 64 levels deep/,
  },
  {
    name: "-o /etc/passwd",
    args: () => [...DRY, "-o", "/etc/passwd"],
    expect:
      /-o: cannot use "\/etc\/passwd" as the output directory: \/etc\/passwd is not a directory/,
  },
  {
    name: "-o below a regular file",
    files: { "plain": "x" },
    args: (dir) => [...DRY, "-o", join(dir, "plain", "out")],
    expect: /plain is not a directory/,
  },
  {
    name: "a 50 MB run.name in a config file",
    files: { "big.toml": `[run]\nname = "${"n".repeat(50 * 1024 * 1024)}"\n` },
    args: () => ["eval", "echo", "@", "big.toml", "-m", "oracle", "--dry-run"],
    expect: /big\.toml: config file is larger than the limit of 8 MiB/,
  },
  {
    name: "a 300-byte run.name",
    args: () => [...DRY, "--run.name", "r".repeat(300)],
    expect: /--run\.name: "r{256}…" \(300 characters\) is longer than 255 bytes/,
  },
  {
    name: "--run.name ../../x",
    args: () => [...DRY, "--run.name", "../../x"],
    expect: /--run\.name: "\.\.\/\.\.\/x" contains a path separator/,
  },
  {
    name: "--run.name a/b",
    args: () => [...DRY, "--run.name", "a/b"],
    expect: /--run\.name: "a\/b" contains a path separator/,
  },
  {
    name: "--run.name ..",
    args: () => [...DRY, "--run.name", ".."],
    expect: /--run\.name: "\.\." would name the output directory or its parent/,
  },
  {
    name: "--run.name with a control character",
    args: () => [...DRY, "--run.name", "a\tb"],
    expect: /--run\.name: "a\\tb" contains a control character/,
  },
  {
    name: "--run.name a\\b",
    args: () => [...DRY, "--run.name", "a\\b"],
    expect: /--run\.name: "a\\\\b" contains a path separator/,
  },
  {
    name: "--env.taskset.path /dev/zero (jsonl)",
    args: () => ["eval", "jsonl", "--env.taskset.path", "/dev/zero", "-m", "oracle"],
    expect: /\/dev\/zero: jsonl taskset file is larger than the limit of 256 MiB/,
  },
  {
    name: "vf sandbox exec --runtime.constructor 1",
    args:
      () => ["sandbox", "exec", "--runtime", "local", "--runtime.constructor", "1", "--", "true"],
    expect: /unknown key --runtime\.constructor; runtime "subprocess" has: /,
  },
  {
    name: "--run.dir with a 300-byte segment",
    args: () => [...DRY, "--run.dir", `runs/${"d".repeat(300)}`],
    expect: /--run\.dir: "runs\/d{251}…" \(305 characters\) is longer than 255 bytes/,
  },
  {
    name: "--env.taskset.system-prompt /dev/zero",
    args: () => [...BASE, "--env.taskset.system-prompt", "/dev/zero"],
    expect: /\/dev\/zero: env\.taskset\.system_prompt file is larger than the limit of 1 MiB/,
  },
  {
    name: "@ /dev/zero",
    args: () => ["eval", "echo", "@", "/dev/zero", "-m", "oracle", "--dry-run"],
    expect: /\/dev\/zero: config file is larger than the limit of 8 MiB/,
  },
  {
    name: "--client.base-url notaurl",
    args: () => [...DRY, "--client.base-url", "notaurl"],
    expect: /--client\.base-url: "notaurl" is not a URL/,
  },
  {
    name: "--client.base-url ftp://host",
    args: () => [...DRY, "--client.base-url", "ftp://host/v1"],
    expect: /--client\.base-url: "ftp:\/\/host\/v1" is not an http\(s\) URL/,
  },
  {
    name: "--client.dialects naming an unknown dialect",
    args: () => [...DRY, "--client.dialects", '["chat", "vertex"]'],
    expect:
      /--client\.dialects: unknown dialect "vertex" \(a provider serves chat, responses, anthropic\)/,
  },
  {
    name: "client.dialects empty in a config file",
    files: { "dialects.toml": "[client]\ndialects = []\n" },
    args: () => ["eval", "echo", "@", "dialects.toml", "-m", "oracle", "--dry-run"],
    expect: /dialects\.toml: client\.dialects: name at least one dialect the provider serves/,
  },
  {
    name: "a runtime rule across keys, under --dry-run",
    args: () => [
      ...DRY,
      "--env.agent.runtime.type",
      "prime",
      "--env.agent.runtime.timeout",
      "60",
      "--env.agent.runtime.idle_timeout",
      "120",
    ],
    expect:
      /runtime "prime": idle_timeout \(120s\) must not exceed the hard sandbox timeout \(60s\)/,
    hint: /idle_timeout/,
  },
  {
    name: "client.images not a boolean in a config file",
    files: { "images.toml": '[client]\nimages = "no"\n' },
    args: () => ["eval", "echo", "@", "images.toml", "-m", "oracle", "--dry-run"],
    expect: /images\.toml: client\.images: .*boolean/,
  },
  {
    name: "a judge base_url that is not a URL",
    files: {
      "judge.toml": '[[env.taskset.task.judges]]\nid = "match"\nbase_url = "nope"\n',
    },
    args: () => ["eval", "echo", "@", "judge.toml", "-m", "oracle", "--dry-run"],
    expect: /judge\.toml: env\.taskset\.task\.judges\.0\.base_url: "nope" is not a URL/,
  },
  {
    name: "JSONL prompt [1,2,3] (line 2)",
    files: { "tasks.jsonl": '{"prompt": "fine"}\n{"prompt": [1, 2, 3]}\n' },
    args: () => ["eval", "jsonl", "--env.taskset.path", "tasks.jsonl", "-m", "oracle"],
    expect: /tasks\.jsonl:2: 'prompt' item 0 is not a chat message/,
  },
  {
    name: "JSONL row [1,2,3] (line 3)",
    files: { "rows.jsonl": '{"prompt": "a"}\n\n[1, 2, 3]\n' },
    args: () => ["eval", "jsonl", "--env.taskset.path", "rows.jsonl", "-m", "oracle"],
    expect: /rows\.jsonl:3: expected a JSON object/,
  },
  {
    name: "an empty taskset",
    files: { "empty.jsonl": "\n\n" },
    args: () => ["eval", "jsonl", "--env.taskset.path", "empty.jsonl", "-m", "oracle"],
    expect: /Nothing to run: taskset "jsonl" yields no tasks/,
  },
  {
    name: "a JSONL taskset file that is not UTF-8",
    files: {
      "latin1.jsonl": new Uint8Array([
        ...new TextEncoder().encode('{"prompt": "caf'),
        0xe9,
        0x22,
        0x7d,
        0x0a,
      ]),
    },
    args: () => ["eval", "jsonl", "--env.taskset.path", "latin1.jsonl", "-m", "oracle"],
    expect:
      /latin1\.jsonl: jsonl taskset file is not UTF-8 text: invalid byte 0xe9 at byte offset 15/,
  },
  {
    name: "a config file that is not UTF-8",
    files: {
      "bad.toml": new Uint8Array([...new TextEncoder().encode('model = "or'), 0xff, 0x22, 0x0a]),
    },
    args: () => ["eval", "echo", "@", "bad.toml", "--dry-run"],
    expect: /bad\.toml: config file is not UTF-8 text: invalid byte 0xff at byte offset 11/,
  },
  {
    name: "a config file that is a directory",
    files: {},
    args: (dir) => ["eval", "echo", "@", dir, "-m", "oracle", "--dry-run"],
    expect: /cannot read config file: is a directory/,
    hint: /^hint: give a config file after `@`, not a directory$/m,
  },
  {
    name: "a config file that does not exist",
    args: () => ["eval", "echo", "@", "absent.toml", "-m", "oracle", "--dry-run"],
    expect: /absent\.toml: cannot read config file: no such file/,
    hint: /^hint: check the path after `@`/m,
  },
  {
    name: "a config file with a TOML syntax error",
    files: { "broken.toml": 'model = "oracle"\nx = [\n' },
    args: () => ["eval", "echo", "@", "broken.toml", "--dry-run"],
    expect: /broken\.toml:3:1: invalid TOML/,
    hint: /^hint: fix the config file at the line:column given$/m,
  },
  {
    name: "a 5 MB system_prompt path",
    files: { "prompt.toml": `[env.taskset]\nsystem_prompt = "${"p".repeat(5_000_000)}"\n` },
    args: () => ["eval", "echo", "@", "prompt.toml", "-m", "oracle"],
    expect:
      /^error: p{256}… \(5000000 characters\): cannot read env\.taskset\.system_prompt file: the name is too long$/m,
  },
  {
    name: "a taskset id with a NUL and an escape character",
    files: { "id.json": '{"env": {"taskset": {"id": "ec\\u0000ho\\u001b[2J"}}}' },
    args: () => ["eval", "@", "id.json", "-m", "oracle", "--dry-run"],
    expect: /Cannot find taskset "ec\\u0000ho\\u001b\[2J"/,
  },
  {
    name: "a flag name with a control character",
    args: () => [...DRY, "--run.na\x07me", "x"],
    expect: /unknown flag --run\.na\\u0007me/,
  },
  {
    name: "a run's sidecar that is not JSON, beside the eval.json given",
    files: {
      "run/configs/eval.json": '{"env": {"taskset": {"id": "echo"}}, "model": "oracle"}',
      "run/configs/verifiers-ts.json": "{",
    },
    args: () => ["eval", "@", "run/configs/eval.json", "--dry-run"],
    expect: /verifiers-ts\.json: unreadable/,
    hint: /^hint: vf eval wrote configs\/verifiers-ts\.json beside eval\.json: restore it/m,
  },
  {
    name: "--resume of a run whose configs/eval.json is not JSON",
    files: { "run/configs/eval.json": "{", "run/traces.jsonl": "" },
    args: () => ["eval", "--resume", "run"],
    // Bun's JSON.parse names no position: then there is no line:column to point to
    expect: /run\/configs\/eval\.json(:1:2)?: invalid JSON/,
    hint: /^hint: fix the (config file at the line:column given|JSON syntax of the config file)$/m,
  },
  {
    name: "--resume by run name of a run whose configs/eval.json is not JSON",
    files: { "outputs/r/configs/eval.json": "{", "outputs/r/traces.jsonl": "" },
    args: () => [...BASE, "--run.name", "r", "--resume"],
    expect: /Cannot resume .*outputs\/r: configs\/eval\.json is not valid JSON/,
    hint: /^hint: configs\/eval\.json is the config vf eval wrote for the run: restore it/m,
  },
  {
    name: "a JSON config file that is not an object",
    files: { "list.json": "[1, 2]" },
    args: () => ["eval", "echo", "@", "list.json", "--dry-run"],
    expect: /list\.json: a config file must hold a JSON object/,
    hint: /^hint: write the JSON config as one object/m,
  },
];

describe("bad input: a resume whose traces.jsonl is a device", () => {
  it("--resume with traces.jsonl linked to /dev/zero exits 2 without reading it", async () => {
    const cwd = tmp("vf-bad-resume-");
    const made = await runCli([...DRY, "--run.name", "r"], { cwd });
    assert.equal(made.code, 0, made.stderr);
    const runDir = join(cwd, "outputs", "r");
    symlinkSync("/dev/zero", join(runDir, "traces.jsonl"));
    const r = await runCli(["eval", "--resume", runDir], { cwd, timeoutMs: 90_000 });
    assert.equal(r.signal, null, "finished on its own");
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /Cannot resume .*outputs\/r: its traces\.jsonl is not a regular file/);
    assert.doesNotMatch(r.stderr, /internal error|\n\s+at .+:\d+:\d+/);
  });
});

/** A flag value too long for one argv entry is refused in-process (the scripting path). */
describe("bad input through loadEvalConfig", () => {
  it("a flag value over 1 MiB characters is refused, naming the flag", async () => {
    await assert.rejects(
      loadEvalConfig(["echo", "-m", "oracle", "--run.name", "x".repeat(1024 * 1024 + 1)]),
      (e: unknown) =>
        e instanceof ConfigError &&
        /--run\.name: value of 1048577 characters is longer than the limit of 1048576/.test(
          e.message,
        ),
    );
  });
});

/** Every path under `root`, relative, directories with a trailing slash. */
function listTree(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      out.push(relative(root, p) + (e.isDirectory() ? "/" : ""));
      if (e.isDirectory()) walk(p);
    }
  };
  walk(root);
  return out.sort();
}

describe("bad input: exit 2, one clear message, nothing written outside the output directory", () => {
  for (const c of CASES) {
    it(c.name, async () => {
      const root = tmp("vf-bad-");
      const cwd = join(root, "work");
      mkdirSync(cwd);
      for (const [name, content] of Object.entries(c.files ?? {})) {
        mkdirSync(dirname(join(cwd, name)), { recursive: true });
        writeFileSync(join(cwd, name), content);
      }
      const before = listTree(root);
      const r = await runCli(c.args(cwd), { cwd, timeoutMs: 90_000 });
      assert.equal(r.signal, null, `killed: ${r.stderr.slice(0, 500)}`);
      assert.equal(r.code, 2, `exit ${r.code}: ${r.stderr.slice(0, 2000)}`);
      assert.match(r.stderr, c.expect);
      if (c.hint) assert.match(r.stderr, c.hint);
      assert.doesNotMatch(r.stderr, /internal error|\n\s+at .+:\d+:\d+/, "no stack trace");
      assert.ok(r.stderr.length < 4096, `stderr is ${r.stderr.length} chars`);
      // deno-lint-ignore no-control-regex
      assert.doesNotMatch(r.stderr, /[\x00-\x09\x0b-\x1f\x7f]/, "no raw control character");
      assert.equal(r.stderr.match(/^error:/gm)?.length, 1, `one error: ${r.stderr}`);
      const outside = listTree(root).filter((p) =>
        !before.includes(p) && !p.startsWith("work/outputs/")
      );
      assert.deepEqual(outside, [], "nothing written outside the output directory");
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    });
  }
});
