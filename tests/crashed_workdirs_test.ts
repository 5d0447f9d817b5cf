/**
 * Work directories a crashed run leaves behind (`/tmp/vf-*`): the local runtime names each
 * directory it will remove after its process, and `vf sandboxes gc` or the next
 * `vf eval --resume` remove those whose process is gone — never a live process's, never
 * one kept on purpose (`keep_workdir`), never anything else.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import process from "node:process";
import { describe, it } from "node:test";
import localPlugin from "../plugins/runtimes/local/mod.ts";
import { runCli } from "./_cli.ts";
import { fastArgs, tmp } from "./_run.ts";

/** The fast plugins call no model; a key variable is set only so the run may start. */
const KEY = { OPENAI_API_KEY: "sk-unused-by-the-fast-plugins" };

/** The id of a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ["--version"], { stdio: "ignore" });
  assert.ok(r.pid && r.pid > 0);
  return r.pid!;
}

/** A temp root holding one orphan, one live process's dir, one kept dir and a stranger. */
function populate(root: string) {
  const dead = deadPid();
  const orphan = join(root, `vf-trace1-p${dead}-AbC123`);
  const live = join(root, `vf-trace2-p${process.pid}-XyZ789`);
  const kept = join(root, "vf-trace3-Kept00");
  const stranger = join(root, "vf-something-else");
  for (const d of [orphan, live, kept, stranger]) {
    mkdirSync(d);
    writeFileSync(join(d, "file.txt"), "x");
  }
  return { orphan, live, kept, stranger };
}

describe("work directories of crashed runs", () => {
  it("the local runtime names the process in a directory it will remove", async () => {
    const rt = localPlugin.create({ type: "subprocess" }, { name: "trace-x" });
    await rt.start();
    const dir = rt.info.id!;
    assert.match(basename(dir), new RegExp(`^vf-trace-x-p${process.pid}-[A-Za-z0-9]{6}$`));
    await rt.stopConfirmed();
    assert.equal(existsSync(dir), false);
  });

  it("`vf sandboxes gc` removes only the directories whose process is gone", async () => {
    const root = mkdtempSync(join(tmpdir(), "vf-wd-root-"));
    const d = populate(root);
    const cache = tmp("vf-wd-cache-");
    const r = await runCli(["sandboxes", "gc"], {
      env: { TMPDIR: root, VF_CACHE_DIR: cache },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /removed 1 work dir\(s\) of crashed runs/);
    assert.equal(existsSync(d.orphan), false, "the orphan is gone");
    assert.equal(existsSync(d.live), true, "a live process's directory stays");
    assert.equal(existsSync(d.kept), true, "a kept directory stays");
    assert.equal(existsSync(d.stranger), true, "other directories stay");
  });

  it("the next `vf eval --resume` removes them too", async () => {
    const cwd = tmp("vf-wd-run-");
    const root = mkdtempSync(join(tmpdir(), "vf-wd-root-"));
    const env = { ...KEY, TMPDIR: root, VF_CACHE_DIR: tmp("vf-wd-cache-") };
    const first = await runCli(["eval", ...fastArgs(2), "--run.name", "r", "--display", "none"], {
      cwd,
      env,
    });
    assert.equal(first.code, 0, first.stderr);
    const d = populate(root);
    const again = await runCli(
      ["eval", "--resume", join(cwd, "outputs", "r"), "--display", "none"],
      {
        cwd,
        env,
      },
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal(existsSync(d.orphan), false, "the orphan is gone");
    assert.equal(existsSync(d.live), true);
    assert.equal(existsSync(d.kept), true);
    assert.equal(existsSync(d.stranger), true);
  });
});
