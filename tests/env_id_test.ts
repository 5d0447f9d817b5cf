import "./_builtins.ts";
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadEvalConfig } from "../lib/config/load_config.ts";
import { PluginError } from "../kit/errors.ts";
import { runCli } from "./_cli.ts";

function tmp(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "vf-env-id-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function refusal(argv: string[], cwd: string): Promise<PluginError> {
  const err = await loadEvalConfig(argv, { cwd }).then(() => null, (e: unknown) => e);
  assert.ok(err instanceof PluginError, `expected a PluginError, got ${String(err)}`);
  return err;
}

const TOML = '[env]\nid = "no-such-env"\n[env.taskset]\nid = "echo"\n';

describe("env.id", () => {
  it("loadEvalConfig() refuses an unknown env id given as a flag, naming the flag", async () => {
    const err = await refusal(["echo", "-m", "oracle", "--env.id", "no-such-env"], tmp({}));
    assert.equal(err.code, "plugin_not_found");
    assert.equal(err.exitCode, 2);
    assert.match(err.message, /^--env\.id: Cannot find env "no-such-env"/);
    assert.match(err.hint ?? "", /Built-in env ids: [^.]*single-agent/);
  });

  it("loadEvalConfig() refuses the same env id set in a TOML file, naming its path", async () => {
    const dir = tmp({ "eval.toml": TOML });
    const err = await refusal(["@", "eval.toml", "-m", "oracle"], dir);
    assert.equal(err.code, "plugin_not_found");
    assert.match(err.message, /^eval\.toml: env\.id: Cannot find env "no-such-env"/);
    assert.match(err.hint ?? "", /Built-in env ids: [^.]*single-agent/);
  });

  it("an unknown harness id names its source the same way", async () => {
    const err = await refusal(["echo", "-m", "oracle", "--env.agent.harness.id", "nope"], tmp({}));
    assert.equal(err.code, "plugin_not_found");
    assert.match(err.message, /^--env\.agent\.harness\.id: Cannot find harness "nope"/);
  });

  it("vf eval exits 2 for an unknown env id from either source, without a stack", async () => {
    const dir = tmp({ "eval.toml": TOML });
    const fromFlag = await runCli(["eval", "echo", "-m", "oracle", "--env.id", "no-such-env"], {
      cwd: dir,
    });
    const fromFile = await runCli(["eval", "@", "eval.toml", "-m", "oracle"], { cwd: dir });
    for (const r of [fromFlag, fromFile]) {
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /Cannot find env "no-such-env"/);
      assert.match(r.stderr, /hint: Built-in env ids: /);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    }
    assert.match(fromFlag.stderr, /--env\.id: /);
    assert.match(fromFile.stderr, /eval\.toml: env\.id: /);
  });

  it("the built-in envs are accepted by id and by their Python spelling", async () => {
    for (const id of ["single-agent", "single_agent", "user-sim", "user_sim"]) {
      const loaded = await loadEvalConfig(["echo", "-m", "oracle", "--env.id", id], {
        cwd: tmp({}),
      });
      assert.equal(loaded.config.env.id, id);
    }
  });
});
