/**
 * Output paths that cannot hold a run — a dangling or looping symbolic link, a file where a
 * folder is expected, a read-only folder — are bad input on every host (`deno run`, `bun`,
 * the compiled binary): exit 2 before any work, a message naming the path as the user gave
 * it, no stack trace, nothing created.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BUILD_BINARY, runProgram, runVf, type VfHost } from "./_plugin_package.ts";
import { tmp } from "./_run.ts";

/** The oracle answers without a model call; a key variable is set only so the run may start. */
const ENV = { OPENAI_API_KEY: "sk-unused-by-the-oracle", NO_COLOR: "1" };
const RUN = ["eval", "echo", "-m", "oracle", "-n", "1", "--display", "none"];

/** One bad output path: what to lay out in the working directory, the flags, the message. */
interface Case {
  name: string;
  setUp(cwd: string): void;
  args: string[];
  expect: RegExp;
  /** Needs a read-only mount, which this process may not be allowed to make. */
  readOnly?: boolean;
}

const CASES: Case[] = [
  {
    name: "-o a dangling symbolic link",
    setUp: (cwd) => symlinkSync(join(cwd, "gone"), join(cwd, "dangling")),
    args: ["-o", "dangling"],
    expect:
      /^error: -o: cannot use "dangling" as the output directory: \S*\/dangling is a symbolic link to \S*\/gone, which does not exist$/m,
  },
  {
    name: "-o below a dangling symbolic link",
    setUp: (cwd) => symlinkSync("/nonexistent/vf-target", join(cwd, "dangling")),
    args: ["-o", "dangling/runs"],
    expect:
      /^error: -o: cannot use "dangling\/runs" as the output directory: \S*\/dangling is a symbolic link to \/nonexistent\/vf-target, which does not exist$/m,
  },
  {
    name: "-o a symbolic link that loops",
    setUp: (cwd) => symlinkSync("loop", join(cwd, "loop")),
    args: ["-o", "loop"],
    expect:
      /^error: -o: cannot use "loop" as the output directory: \S*\/loop is a symbolic link that loops$/m,
  },
  {
    name: "-o a regular file",
    setUp: (cwd) => writeFileSync(join(cwd, "notes.txt"), "x"),
    args: ["-o", "notes.txt"],
    expect:
      /^error: -o: cannot use "notes\.txt" as the output directory: \S*\/notes\.txt is not a directory$/m,
  },
  {
    name: "a run directory that is a dangling symbolic link",
    setUp: (cwd) => {
      mkdirSync(join(cwd, "out"));
      symlinkSync("/nonexistent/vf-run", join(cwd, "out", "r"));
    },
    args: ["-o", "out", "--run.name", "r"],
    expect:
      /^error: cannot make the run directory "\S*\/out\/r": \S*\/out\/r is a symbolic link to \/nonexistent\/vf-run, which does not exist$/m,
  },
  {
    name: "-o inside a read-only folder",
    setUp: (cwd) => {
      mkdirSync(join(cwd, "ro"));
      execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", join(cwd, "ro")], {
        stdio: "ignore",
      });
      mounts.push(join(cwd, "ro"));
    },
    args: ["-o", "ro/out"],
    expect:
      /^error: -o: cannot use "ro\/out" as the output directory: \S*\/ro is not writable: the file system is read-only \(EROFS\)$/m,
    readOnly: true,
  },
];

const mounts: string[] = [];

/** Whether this process may mount a file system (a read-only tmpfs stands for one it cannot write). */
function canMount(): boolean {
  const probe = tmp("vf-mount-probe-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", probe], {
      stdio: "ignore",
    });
    execFileSync("umount", [probe], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

describe("output paths that cannot hold a run: exit 2 naming the path given, on every host", () => {
  let binary = "";
  // decided when the tests are declared, so both runners report the skip as a skip
  const mountable = canMount();
  before(async () => {
    const root = tmp("vf-output-paths-bin-");
    binary = join(root, "vf");
    const built = await runProgram("bash", [BUILD_BINARY, binary], { cwd: root });
    assert.equal(built.code, 0, built.stderr);
  });
  after(() => {
    for (const m of mounts) execFileSync("umount", [m], { stdio: "ignore" });
  });

  for (const host of ["deno", "bun", "binary"] as VfHost[]) {
    for (const c of CASES) {
      const skip = c.readOnly && !mountable
        ? "cannot mount a read-only tmpfs here (not permitted)"
        : false;
      it(`${host}: ${c.name}`, { skip }, async () => {
        const cwd = tmp("vf-output-paths-");
        c.setUp(cwd);
        const before = readdirSync(cwd).sort();
        const r = await runVf(host, [...RUN, ...c.args], { cwd, env: ENV, binary });
        assert.equal(r.code, 2, `exit ${r.code}: ${r.stderr.slice(0, 2000)}`);
        assert.match(r.stderr, c.expect);
        assert.match(r.stderr, /^hint: /m);
        assert.doesNotMatch(r.stderr, /internal error|\n\s+at .+:\d+:\d+/, "no stack trace");
        assert.deepEqual(readdirSync(cwd).sort(), before, "nothing created");
        assert.equal(existsSync("/nonexistent"), false, "no link target created");
      });
    }
  }
});
