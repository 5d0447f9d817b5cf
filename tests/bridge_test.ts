import "./_builtins.ts";
import { before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InputError } from "../kit/errors.ts";
import { isV1Config, primeEvalArgv, translateV1Args } from "../lib/bridge/prime_eval.ts";
import { runCli } from "./_cli.ts";
import { at } from "./_assert.ts";

function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof InputError, `expected InputError, got ${err}`);
    return err;
  }
  assert.fail("expected an InputError");
}

describe("vf bridge prime-eval argument translation", () => {
  let dir: string;
  let v1: string;
  let legacy: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "vf-bridge-"));
    v1 = join(dir, "eval.toml");
    writeFileSync(v1, `model = "oracle"\n\n[env.taskset]\nid = "echo"\n`);
    legacy = join(dir, "legacy.toml");
    writeFileSync(legacy, `[eval]\nenv_id = "gsm8k"\nnum_examples = 5\n`);
    writeFileSync(join(dir, "broken.toml"), `[env.taskset\nid = `);
  });

  it("turns the full host-injected flag set into exactly @ <abs>, model, output dir and switches", () => {
    const args = [
      "--api-base-url",
      "https://api.pinference.ai/api/v1",
      "-m",
      "openai/gpt-4.1-mini",
      "--api-key-var",
      "PRIME_API_KEY",
      "-b",
      "https://other/v1",
      "-k",
      "OTHER_KEY",
      "--provider",
      "prime",
      "-p",
      "prime",
      "--endpoints-path",
      "./configs/endpoints.py",
      "-e",
      "./endpoints.toml",
      "--output-dir",
      "outputs/run",
      "--header",
      "X-Team: acme",
      "--header",
      "X-Other: 1",
      "--header-from-state",
      "X-Session:session_id",
      "--env-dir-path",
      "./environments",
      "--save-results",
      "-s",
      "--disable-tui",
      "--dry-run",
      "--verbose",
      "--skip-upload",
      "--no-push",
    ];
    assert.deepEqual(primeEvalArgv("eval.toml", args, dir), [
      "@",
      v1,
      "--model",
      "openai/gpt-4.1-mini",
      "--output-dir",
      "outputs/run",
      "--dry-run",
      "--verbose",
      "--no-push",
    ]);
  });

  const dropped: [string, string[]][] = [
    ["--api-base-url", ["--api-base-url", "http://x/v1"]],
    ["-b", ["-b", "http://x/v1"]],
    ["--api-key-var", ["--api-key-var", "K"]],
    ["-k", ["-k", "K"]],
    ["--provider", ["--provider", "prime"]],
    ["-p", ["-p", "prime"]],
    ["--endpoints-path", ["--endpoints-path", "e.py"]],
    ["-e", ["-e", "e.py"]],
    ["--header", ["--header", "A: b"]],
    ["--header-from-state", ["--header-from-state", "A:b"]],
    ["--env-dir-path", ["--env-dir-path", "./envs"]],
    ["--save-results", ["--save-results"]],
    ["-s", ["-s"]],
    ["--disable-tui", ["--disable-tui"]],
  ];
  for (const [name, args] of dropped) {
    it(`drops ${name} (with its value) on its own`, () => {
      assert.deepEqual(primeEvalArgv(v1, args, dir), ["@", v1]);
    });
  }

  it("accepts --x=v forms: dropped ones vanish, kept ones are normalised to long form", () => {
    assert.deepEqual(
      translateV1Args([
        "--api-base-url=http://x/v1",
        "--api-key-var=K",
        "-b=http://y",
        "--header=A: b=c",
        "--env-dir-path=./envs",
        "-m=gpt-x",
        "--output-dir=out",
      ]),
      ["--model", "gpt-x", "--output-dir", "out"],
    );
    assert.deepEqual(translateV1Args(["--model=a", "-o", "o"]), [
      "--model",
      "a",
      "--output-dir",
      "o",
    ]);
  });

  it("translates --skip-upload to --no-push once", () => {
    assert.deepEqual(translateV1Args(["--skip-upload"]), ["--no-push"]);
    assert.deepEqual(translateV1Args(["--skip-upload", "--skip-upload", "--no-push"]), [
      "--no-push",
    ]);
  });

  it("errors on a missing value after -m (and other value options)", () => {
    for (const args of [["-m"], ["-m", "--verbose"], ["--api-key-var"], ["-o", "-m", "x"]]) {
      const e = inputError(() => translateV1Args(args));
      assert.equal(e.code, "bridge_argument_missing_value", args.join(" "));
      assert.equal(e.exitCode, 2);
      assert.match(e.message, new RegExp(`argument ${args[0]} needs a value`));
    }
  });

  it("fails closed on anything else", () => {
    for (
      const arg of ["--num-examples", "-n", "extra", "--dry-run=true", "--push", "--rollouts=3"]
    ) {
      const e = inputError(() => primeEvalArgv(v1, ["-m", "x", arg], dir));
      assert.equal(e.message, `unsupported prime eval v1 bridge argument: ${arg}`);
      assert.equal(e.exitCode, 2);
    }
  });

  it("routes a non-v1 TOML and a bare id to plain vf eval, arguments untouched", () => {
    assert.equal(isV1Config(v1, dir), true);
    assert.equal(isV1Config(legacy, dir), false);
    assert.equal(isV1Config("broken.toml", dir), false);
    assert.equal(isV1Config("missing.toml", dir), false);
    assert.deepEqual(primeEvalArgv(legacy, ["-n", "5", "--whatever"], dir), [
      legacy,
      "-n",
      "5",
      "--whatever",
    ]);
  });

  it("gives Prime's injected options Prime's meaning on a non-v1 target too", () => {
    const injected = [
      "-m",
      "m",
      "-b",
      "http://x/v1",
      "-k",
      "PRIME_API_KEY",
      "--header",
      "X-PI-Job-Id: job-1",
      "--header=X-Prime-Team-ID: team",
      "-s",
      "--save-results",
      "--disable-tui",
      "--provider",
      "prime",
      "--skip-upload",
      "--env-dir-path",
      "./environments",
      "-n",
      "2",
      "--env.agent.max-turns",
      "3",
    ];
    assert.deepEqual(primeEvalArgv("reverse-text", injected, dir), [
      "reverse-text",
      "-m",
      "m",
      "--client.base-url",
      "http://x/v1",
      "--client.api-key-var",
      "PRIME_API_KEY",
      "--no-push",
      "-n",
      "2",
      "--env.agent.max-turns",
      "3",
      "--client.headers",
      JSON.stringify({ "X-PI-Job-Id": "job-1", "X-Prime-Team-ID": "team" }),
    ]);
    assert.match(
      inputError(() => primeEvalArgv("echo", ["--provider", "openai"], dir)).message,
      /--provider openai needs a base URL/,
    );
    assert.match(
      inputError(() => primeEvalArgv("echo", ["--header", "no colon"], dir)).message,
      /is not "Name: value"/,
    );
    assert.match(
      inputError(() => primeEvalArgv("echo", ["-e", "./endpoints.py"], dir)).message,
      /unsupported prime eval bridge argument: -e/,
    );
  });
});

describe("vf bridge prime-eval through the CLI", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "vf-bridge-cli-"));
    writeFileSync(
      join(dir, "eval.toml"),
      `display = "none"\n\n[env.taskset]\nid = "echo"\n\n[env.agent.harness]\nid = "null"\n`,
    );
  });

  it("runs a v1 config with the host's flags translated", { timeout: 60_000 }, async () => {
    const r = await runCli(
      [
        "bridge",
        "prime-eval",
        "eval.toml",
        "-m",
        "oracle",
        "-o",
        "out",
        "-b",
        "https://api.example/v1",
        "-k",
        "PRIME_API_KEY",
        "--header",
        "X-Team: acme",
        "--disable-tui",
        "--skip-upload",
      ],
      { cwd: dir, env: { VF_CACHE_DIR: join(dir, "cache") } },
    );
    assert.equal(r.code, 0, r.stderr);
    const runs = readdirSync(join(dir, "out"));
    assert.equal(runs.length, 1);
    assert.ok(existsSync(join(dir, "out", at(runs, 0), "traces.jsonl")));
  });

  it(
    "exits 2 with the exact message for an unsupported argument",
    { timeout: 60_000 },
    async () => {
      const r = await runCli(["bridge", "prime-eval", "eval.toml", "-m", "oracle", "--bogus"], {
        cwd: dir,
        env: { VF_CACHE_DIR: join(dir, "cache") },
      });
      assert.equal(r.code, 2);
      assert.match(r.stderr, /unsupported prime eval v1 bridge argument: --bogus/);
    },
  );

  it(
    "runs a bare taskset id as plain vf eval (and refuses --push there)",
    { timeout: 60_000 },
    async () => {
      const ok = await runCli(
        ["bridge", "prime-eval", "echo", "-m", "oracle", "-o", "plain", "--display", "none"],
        { cwd: dir, env: { VF_CACHE_DIR: join(dir, "cache") } },
      );
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(readdirSync(join(dir, "plain")).length, 1);
      // Prime's -s is --save-results, never vf's shuffle; -b/-k reach the client config
      const saved = await runCli(
        ["bridge", "prime-eval", "echo", "-m", "oracle", "-s", "-n", "1", "-o", "saved"],
        { cwd: dir, env: { VF_CACHE_DIR: join(dir, "cache") } },
      );
      assert.equal(saved.code, 0, saved.stderr);
      const run = at(readdirSync(join(dir, "saved")), 0);
      const config = JSON.parse(
        readFileSync(join(dir, "saved", run, "configs", "eval.json"), "utf8"),
      );
      assert.equal(config.shuffle, false);
      const dry = await runCli(
        [
          "bridge",
          "prime-eval",
          "echo",
          "-m",
          "m",
          "-b",
          "http://127.0.0.1:9/v1",
          "-k",
          "PRIME_API_KEY",
          "--skip-upload",
          "--dry-run",
          "-o",
          "dry",
        ],
        { cwd: dir, env: { VF_CACHE_DIR: join(dir, "cache") } },
      );
      assert.equal(dry.code, 0, dry.stderr);
      const dryRun = at(readdirSync(join(dir, "dry")), 0);
      const dryConfig = JSON.parse(
        readFileSync(join(dir, "dry", dryRun, "configs", "eval.json"), "utf8"),
      );
      assert.equal(dryConfig.client.base_url, "http://127.0.0.1:9/v1");
      assert.equal(dryConfig.client.api_key_var, "PRIME_API_KEY");
      const push = await runCli(["bridge", "prime-eval", "echo", "-m", "oracle", "--push"], {
        cwd: dir,
        env: { VF_CACHE_DIR: join(dir, "cache") },
      });
      assert.equal(push.code, 2);
      assert.match(push.stderr, /--push: verifiers-ts has no results upload/);
    },
  );
});
