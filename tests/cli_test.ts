import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "./_cli.ts";
import { VERSION } from "../kit/version.ts";
import { at } from "./_assert.ts";

const ROOT = join(import.meta.dirname!, "..");

describe("vf CLI", () => {
  it("--version prints the version kept equal in deno.json and package.json", async () => {
    const r = await runCli(["--version"]);
    assert.equal(r.code, 0);
    assert.equal(r.stdout.trim(), `vf ${VERSION}`);
    assert.equal(JSON.parse(readFileSync(join(ROOT, "deno.json"), "utf8")).version, VERSION);
    assert.equal(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version, VERSION);
  });

  it("--help shows usage with examples on stdout", async () => {
    const r = await runCli(["--help"]);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Usage:/);
    assert.match(r.stdout, /Examples:\n {2}vf eval @ examples\/quickstart\.toml/);
  });

  it("an unknown command exits 2", async () => {
    const r = await runCli(["evaluate"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /unknown command "evaluate"/);
  });

  it("plugins list prints kind, id and description of every built-in", async () => {
    const r = await runCli(["plugins", "list"]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split("\n");
    for (
      const [kind, id] of <[string, string][]> [
        ["taskset", "shell-basics"],
        ["taskset", "reverse-text"],
        ["harness", "bash"],
        ["judge", "match"],
        ["runtime", "subprocess"],
      ]
    ) {
      const line = lines.find((l) => l.startsWith(kind) && l.split(/\s+/)[1] === id);
      assert.ok(line, `${kind} ${id} missing from:\n${r.stdout}`);
      assert.ok(line.split(/\s+/).length > 3, `no description: ${line}`);
    }
  });

  it("plugins show prints a taskset's config fields", async () => {
    const r = await runCli(["plugins", "show", "taskset", "addition"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /taskset "addition"/);
    assert.match(r.stdout, /digits\s+int\s+.*\(default: 3\)/);
    const bad = await runCli(["plugins", "show", "tasket", "addition"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown kind "tasket"/);
  });

  it("eval --help with an id shows the narrowed plugin's fields", async () => {
    const r = await runCli(["eval", "addition", "--help"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Taskset "addition"/);
    assert.match(r.stdout, /--env\.taskset\.digits\s+int/);
    assert.match(r.stdout, /--env\.agent\.max-turns\s+int \| null/);
    assert.match(r.stdout, /--max-concurrent\s+int\s+.*\(default: 128\)/);
  });

  it("--dry-run writes configs/eval.json under the run name, without the API key", async () => {
    const out = mkdtempSync(join(tmpdir(), "vf-dry-"));
    const secret = "sk-test-secret-value-123";
    const r = await runCli(["eval", "echo", "-m", "Org/Model-X", "--dry-run", "-o", out], {
      env: { OPENAI_API_KEY: secret },
    });
    assert.equal(r.code, 0, r.stderr);
    const dirs = readdirSync(out);
    assert.equal(dirs.length, 1);
    assert.match(at(dirs, 0), /^echo--org--model-x--bash--[0-9a-f]{8}$/);
    const text = readFileSync(join(out, at(dirs, 0), "configs", "eval.json"), "utf8");
    const saved = JSON.parse(text);
    assert.equal(saved.client.api_key_var, "OPENAI_API_KEY");
    assert.equal(saved.num_tasks, null);
    assert.equal("dry_run" in saved, false);
    assert.equal(
      text.includes(secret) || r.stdout.includes(secret) || r.stderr.includes(secret),
      false,
    );
    assert.equal(readdirSync(join(out, at(dirs, 0))).join(","), "configs");
    const again = await runCli([
      "validate-config",
      "@",
      join(out, at(dirs, 0), "configs", "eval.json"),
      "-o",
      out,
    ]);
    assert.equal(again.code, 0, again.stderr);
  });

  it("bad input exits 2 with every problem and no stack trace", async () => {
    const r = await runCli([
      "eval",
      "echo",
      "-m",
      "x",
      "--env.agent.max-turns",
      "x",
      "--bogus",
      "1",
      "--dry-run",
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--env\.agent\.max-turns: expected an integer/);
    assert.match(r.stderr, /unknown flag --bogus/);
    assert.match(r.stderr, /hint: /);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
    const p = await runCli(["eval", "nope-set", "-m", "x", "--dry-run"]);
    assert.equal(p.code, 2);
    assert.match(p.stderr, /Cannot find taskset "nope-set"/);
    assert.doesNotMatch(p.stderr, /\n\s+at /);
  });
});
