/**
 * Outputs that cannot be written — a full disk, a path too long, a file where the output
 * directory should be — end `vf eval` with exit code 2 and a message naming what failed and
 * where: no stack trace, no temp file left behind, no torn line in traces.jsonl.
 *
 * The full disk is real: `traces.jsonl` is a link to /dev/full (every write fails with
 * ENOSPC), and, where this process may mount file systems, a tiny tmpfs filled to the brim.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { after, before, describe, it } from "node:test";
import { runCli } from "./_cli.ts";
import { fastArgs, tmp } from "./_run.ts";

/** The fast plugins call no model; a key variable is set only so the run may start. */
const KEY = { OPENAI_API_KEY: "sk-unused-by-the-fast-plugins" };

/** Every file under `root` (relative paths). */
function files(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(relative(root, p));
    }
  };
  walk(root);
  return out;
}

function assertCleanExit2(r: { code: number | null; stderr: string }, message: RegExp): void {
  assert.equal(r.code, 2, r.stderr.slice(0, 2000));
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stderr, /internal error|\n\s+at .+:\d+:\d+/, "no stack trace");
}

/** True where this process may mount a file system (a tiny tmpfs, unmounted at once). */
function mayMount(): boolean {
  const dir = tmp("vf-tmpfs-probe-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=4k", "tmpfs", dir], { stdio: "ignore" });
    execFileSync("umount", [dir], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// A skip is decided where the test is declared: one decided inside a running test counts as
// a pass on Deno (and as a skip on Bun).
const noFullDevice = existsSync("/dev/full") ? false : "no /dev/full on this system";
const noMount = mayMount()
  ? false
  : "cannot mount a tmpfs here (not permitted); /dev/full covers ENOSPC";

describe("outputs that cannot be written: exit 2, named, nothing half-written", () => {
  it("traces.jsonl on a full device (/dev/full): ENOSPC named with its path, no temp file", {
    skip: noFullDevice,
  }, async () => {
    const cwd = tmp("vf-full-");
    const runDir = join(cwd, "outputs", "r1");
    mkdirSync(runDir, { recursive: true });
    symlinkSync("/dev/full", join(runDir, "traces.jsonl"));
    const r = await runCli(["eval", ...fastArgs(3), "--run.name", "r1", "--display", "none"], {
      cwd,
      env: KEY,
    });
    assertCleanExit2(
      r,
      /error: cannot write traces file .*outputs\/r1\/traces\.jsonl: no space left on the device \(ENOSPC\)/,
    );
    assert.match(r.stderr, /hint: free some space/);
    const left = files(cwd).filter((f) => /\.tmp-/.test(f));
    assert.deepEqual(left, [], "no temp file left behind");

    // room again: the resume finishes the run
    rmSync(join(runDir, "traces.jsonl"));
    writeFileSync(join(runDir, "traces.jsonl"), "");
    const resumed = await runCli(["eval", "--resume", runDir, "--display", "none"], {
      cwd,
      env: KEY,
    });
    assert.equal(resumed.code, 0, resumed.stderr);
    const lines = readFileSync(join(runDir, "traces.jsonl"), "utf8").split("\n").filter(Boolean);
    assert.equal(lines.length, 3, "every episode written once");
  });

  it("an output directory name longer than the file system allows: ENAMETOOLONG named", async () => {
    const cwd = tmp("vf-long-");
    const long = "o".repeat(300);
    const r = await runCli(["eval", ...fastArgs(1), "-o", long, "--display", "none"], {
      cwd,
      env: KEY,
    });
    assertCleanExit2(
      r,
      /error: -o: cannot use "o{256}…" \(300 characters\) as the output directory: .*o{200}.*: the name is too long \(ENAMETOOLONG\)/,
    );
    assert.deepEqual(files(cwd), []);
  });

  it("an output directory below a regular file is refused before anything is written", async () => {
    const cwd = tmp("vf-notdir-");
    writeFileSync(join(cwd, "file"), "x");
    const r = await runCli(["eval", ...fastArgs(1), "-o", "file/out", "--display", "none"], {
      cwd,
      env: KEY,
    });
    assertCleanExit2(
      r,
      /-o: cannot use "file\/out" as the output directory: .*\/file is not a directory/,
    );
    assert.deepEqual(files(cwd), ["file"]);
  });

  describe("a full tmpfs (needs permission to mount)", () => {
    let mnt = "";
    let mounted = false;
    before(() => {
      mnt = tmp("vf-tmpfs-");
      try {
        execFileSync("mount", ["-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt], { stdio: "ignore" });
        mounted = true;
        // fill it: a file that takes every block there is
        try {
          execFileSync("dd", ["if=/dev/zero", `of=${join(mnt, "fill")}`, "bs=4k"], {
            stdio: "ignore",
          });
        } catch {
          // dd stops with ENOSPC once the file system is full, which is the point
        }
      } catch {
        mounted = false;
      }
    });
    after(() => {
      if (mounted) execFileSync("umount", [mnt], { stdio: "ignore" });
    });

    it("-o on a full file system: exit 2 naming the file, no eval.json.tmp-* left", {
      skip: noMount,
    }, async () => {
      assert.ok(mounted, "the tmpfs could not be mounted, though a probe could mount one");
      const r = await runCli(
        ["eval", ...fastArgs(2), "-o", join(mnt, "out"), "--run.name", "r", "--display", "none"],
        { cwd: mnt, env: KEY },
      );
      assertCleanExit2(
        r,
        /error: cannot write .*\/out\/r\/.*: no space left on the device \(ENOSPC\)/,
      );
      const left = files(mnt).filter((f) => /\.tmp-/.test(f));
      assert.deepEqual(left, [], "no temp file left behind");
    });
  });
});
