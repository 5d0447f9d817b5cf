import { after, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import local, { isHiddenHostVariable } from "../plugins/runtimes/local/mod.ts";
import { ConfigError, SandboxError } from "../kit/errors.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import { TIMEOUT_EXIT_CODE } from "../kit/runtime/runtime.ts";
import { spawnProgram } from "../kit/_runtime/spawn.ts";
import { getAllEnv } from "../kit/_runtime/env.ts";
import { execPath } from "../kit/_runtime/is_compiled.ts";
import { runtimeName } from "../kit/_runtime/runtime_name.ts";
import { runtimeConformance } from "./conformance/runtime_conformance.ts";
import { run } from "./_run.ts";

runtimeConformance("local runtime", () => local.create({}, { name: "conformance" }));

const made: Runtime[] = [];
const scratch: string[] = [];
function makeLocal(config: Record<string, unknown> = {}, name = "test"): Runtime {
  const rt = local.create(config, { name });
  made.push(rt);
  return rt;
}
async function scratchDir(): Promise<string> {
  const dir = await realpath(await mkdtemp(join(tmpdir(), "vf-local-test-")));
  scratch.push(dir);
  return dir;
}
const hostEnv = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

after(async () => {
  for (const rt of made) await rt.stop();
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

describe("local runtime plugin", () => {
  it("is a local runtime plugin with documented defaults", () => {
    assert.equal(local.kind, "runtime");
    assert.equal(local.id, "subprocess");
    assert.equal(local.isLocal, true);
    assert.deepEqual(local.config.parse({}), { workdir_root: null, keep_workdir: false, env: {} });
    for (const key of ["workdir_root", "keep_workdir", "env"] as const) {
      const description = local.config.shape[key]?.description;
      assert.ok(description && description.length > 10, `${key} has no description`);
    }
  });

  it("create() rejects a bad config with a ConfigError naming the key", () => {
    assert.throws(
      () => local.create({ keep_workdir: "yes" }, { name: "x" }),
      (e: unknown) => e instanceof ConfigError && /keep_workdir/.test(e.message),
    );
    assert.throws(
      () => local.create({ env: { A: 1 } }, { name: "x" }),
      (e: unknown) => e instanceof ConfigError && /env\.A/.test(e.message),
    );
  });
});

describe("local runtime in a run", () => {
  it("makes no work directory for a rollout that uses none, one for each that writes files", async () => {
    const kept = async (taskset: string): Promise<string[]> => {
      const root = await scratchDir();
      const cwd = await scratchDir();
      const { summary } = await run([
        taskset,
        "-n",
        "2",
        "-m",
        "oracle",
        "--env.agent.harness.id",
        "null",
        "--env.agent.runtime.workdir-root",
        root,
        "--env.agent.runtime.keep-workdir",
        "true",
      ], cwd);
      assert.equal(summary.counts.episodes, 2);
      return await readdir(root);
    };
    // addition: the null harness and the match judge touch no file
    assert.deepEqual(await kept("addition"), [], "a rollout that uses no directory made one");
    // shell-basics writes each task's files before the agent starts
    assert.equal((await kept("shell-basics")).length, 2, "each rollout has its own directory");
  });
});

describe("local runtime", () => {
  it("has no identity before start and refuses to run", async () => {
    const rt = makeLocal();
    assert.deepEqual(rt.info, { type: "subprocess", id: null });
    assert.equal(rt.isLocal, true);
    assert.equal(rt.timeoutS, null);
    assert.equal(await rt.alive(), false);
    assert.throws(() => rt.workdir, SandboxError);
    await assert.rejects(rt.run(["true"]), /Cannot run "true": runtime is not started/);
    await assert.rejects(rt.write("a.txt", "x"), /Cannot write "a.txt": runtime is not started/);
  });

  it("start() makes vf-<name>-* in the OS temp dir; info.id is the workdir; stop removes it", async () => {
    const rt = makeLocal({}, "trace/42 x");
    await rt.start();
    const dir = rt.workdir;
    assert.equal(dirname(dir), await realpath(tmpdir()));
    assert.match(basename(dir), /^vf-trace_42_x-/);
    assert.deepEqual(rt.info, { type: "subprocess", id: dir });
    assert.equal((await rt.run(["pwd"])).stdout, `${dir}\n`);
    await rt.stop();
    assert.equal(existsSync(dir), false);
    assert.equal(rt.info.id, dir, "the id is kept after stop");
  });

  it("names each start's directory vf-<safe name>-p<pid>-<6 random letters>, no two alike", async () => {
    const names = new Set<string>();
    const suffixes = new Set<string>();
    const cases: [string, string][] = [
      ["0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"],
      ["a.b_c-D", "a.b_c-D"],
      ["", "runtime"],
      ["x".repeat(70), "x".repeat(64)],
      ["é/ü  ok", "_ok"],
    ];
    for (let i = 0; i < 1000; i++) {
      const [name, safe] = cases[i % cases.length]!;
      const rt = local.create({}, { name });
      await rt.start(); // the directory is named here, made on first use only
      const base = basename(rt.info.id!);
      const m = new RegExp(`^vf-(.*)-p${process.pid}-([A-Za-z0-9]{6})$`).exec(base);
      assert.ok(m, base);
      assert.equal(m[1], safe);
      names.add(base);
      suffixes.add(m[2]!);
      await rt.stop();
    }
    assert.equal(names.size, 1000);
    assert.ok(suffixes.size > 990, `${suffixes.size} distinct suffixes in 1000`);
  });

  it("start() refuses a second start while running", async () => {
    const rt = makeLocal();
    await rt.start();
    await assert.rejects(rt.start(), /already started/);
  });

  it("workdir_root holds the workdirs (created when missing); restart gives a new one", async () => {
    const root = join(await scratchDir(), "nested", "root");
    const rt = makeLocal({ workdir_root: root });
    await rt.start();
    const first = rt.workdir;
    assert.equal(dirname(first), root);
    await rt.stopConfirmed();
    assert.equal(existsSync(first), false);
    await rt.start();
    assert.notEqual(rt.workdir, first);
    assert.equal(dirname(rt.workdir), root);
    await rt.stopConfirmed();
  });

  it("start() fails with a SandboxError when workdir_root cannot be used", async () => {
    const file = join(await scratchDir(), "a-file");
    await writeFile(file, "not a directory");
    const rt = makeLocal({ workdir_root: file });
    await rejectsWith(rt.start(), /local sandbox provisioning failed/);
  });

  it("makes the workdir on first use only: none for a rollout that runs nothing", async () => {
    const root = await scratchDir();
    const logged: string[] = [];
    const unused = local.create({ workdir_root: root, keep_workdir: true }, {
      name: "unused",
      log: (m) => logged.push(m),
    });
    made.push(unused);
    await unused.start();
    assert.equal(await unused.alive(), true);
    assert.equal(typeof unused.info.id, "string");
    assert.equal(dirname(unused.info.id!), root);
    assert.deepEqual(await readdir(root), [], "start() made no directory");
    await assert.rejects(unused.read("missing.txt"), /no such file/);
    await unused.stopConfirmed();
    assert.deepEqual(await readdir(root), [], "nothing was made, so nothing was kept");
    assert.deepEqual(logged, [], "no kept directory is announced");

    const used = makeLocal({ workdir_root: root });
    await used.start();
    const dir = used.info.id!;
    assert.equal((await used.run(["pwd"])).stdout, `${dir}\n`, "the first command made it");
    assert.deepEqual(await readdir(root), [basename(dir)]);
    await used.stopConfirmed();
    assert.deepEqual(await readdir(root), []);

    const written = makeLocal({ workdir_root: root });
    await written.start();
    await Promise.all([written.write("a.txt", "a"), written.write("b/c.txt", "c")]);
    assert.deepEqual((await readdir(written.info.id!)).sort(), ["a.txt", "b"]);
    await written.stopConfirmed();
    assert.deepEqual(await readdir(root), []);
  });

  it("makes the workdir when its path is read, and again when the root went away", async () => {
    const root = join(await scratchDir(), "gone");
    const rt = makeLocal({ workdir_root: root });
    await rt.start();
    const first = rt.workdir;
    assert.equal(existsSync(first), true, "reading workdir made it");
    await rt.stopConfirmed();
    await rm(root, { recursive: true });
    await rt.start();
    assert.equal((await rt.run(["pwd"])).stdout, `${rt.info.id}\n`, "the root is made again");
    await rt.stopConfirmed();
    assert.deepEqual(await readdir(root), []);
  });

  it("keep_workdir keeps the workdir after stop", async () => {
    const root = await scratchDir();
    const rt = makeLocal({ workdir_root: root, keep_workdir: true });
    await rt.start();
    await rt.write("kept.txt", "still here");
    await rt.stopConfirmed();
    assert.equal(rt.stopped, true);
    assert.equal(existsSync(join(rt.workdir, "kept.txt")), true);
  });

  it("passes only allowlisted host variables (PATH, HOME, LANG, LC_*, ...), never credentials", async () => {
    const hidden = [
      "OPENAI_API_KEY",
      "MODEL_TOKEN",
      "GITHUB_TOKEN",
      "AWS_SECRET_ACCESS_KEY",
      "VF_TEST_INVISIBLE",
    ];
    const names = [...hidden, "LC_VF_TEST", "TZ"];
    const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
    for (const n of names) process.env[n] = `value-of-${n}`;
    try {
      const rt = makeLocal();
      await rt.start();
      const r = await rt.run(["env"]);
      const seen = new Set(r.stdout.split("\n").map((l) => l.split("=")[0]));
      for (const n of ["PATH", "HOME", "LC_VF_TEST", "TZ"]) assert.equal(seen.has(n), true, n);
      for (const n of hidden) {
        assert.equal(seen.has(n), false, `${n} leaked`);
        assert.equal(r.stdout.includes(`value-of-${n}`), false);
      }
      // Explicit env (e.g. the per-rollout secret a harness passes) is not filtered.
      const explicit = await rt.run(["bash", "-c", 'printf %s "$OPENAI_API_KEY"'], {
        env: { OPENAI_API_KEY: "rollout-secret" },
      });
      assert.equal(explicit.stdout, "rollout-secret");
    } finally {
      for (const n of names) {
        if (saved[n] === undefined) delete process.env[n];
        else process.env[n] = saved[n];
      }
    }
    assert.equal(isHiddenHostVariable("X_API_KEYS"), true);
    assert.equal(isHiddenHostVariable("HF_TOKEN"), true);
    assert.equal(isHiddenHostVariable("LC_ALL"), false);
    assert.equal(isHiddenHostVariable("PATH"), false);
  });

  it("config env applies to every command; the call's env overrides it", async () => {
    const rt = makeLocal({ env: { VF_A: "config", VF_B: "config" } });
    await rt.start();
    const cmd = ["bash", "-c", 'printf "%s|%s" "$VF_A" "$VF_B"'];
    assert.equal((await rt.run(cmd)).stdout, "config|config");
    assert.equal((await rt.run(cmd, { env: { VF_B: "call" } })).stdout, "config|call");
  });

  it("run(): missing program -> 127, killed by a signal -> 128+N, abort -> 137", async () => {
    const rt = makeLocal();
    await rt.start();
    const missing = await rt.run(["vf-no-such-program-xyz", "arg"]);
    assert.equal(missing.exitCode, 127);
    assert.match(missing.stderr, /vf-no-such-program-xyz.*command not found/);
    const missingCwd = await rt.run(["true"], { cwd: "no/such/dir" });
    assert.equal(missingCwd.exitCode, 127);
    assert.match(missingCwd.stderr, /no\/such\/dir" does not exist/);
    assert.equal((await rt.run(["bash", "-c", "kill -TERM $$"])).exitCode, 128 + 15);
    const ac = new AbortController();
    const running = rt.run(["bash", "-c", "touch go; sleep 30"], { signal: ac.signal });
    await waitFor(() => existsSync(join(rt.workdir, "go")));
    ac.abort();
    assert.equal((await running).exitCode, 128 + 9);
    await assert.rejects(rt.run([]), SandboxError);
  });

  it("run(): a timed-out command keeps the output it wrote before the kill", async () => {
    const rt = makeLocal();
    await rt.start();
    const r = await rt.run(["bash", "-c", "echo before; echo err >&2; sleep 30"], {
      timeoutMs: 300,
    });
    assert.deepEqual(r, { exitCode: TIMEOUT_EXIT_CODE, stdout: "before\n", stderr: "err\n" });
  });

  it("stop() kills commands in flight, then removes the workdir", async () => {
    const rt = makeLocal();
    await rt.start();
    const dir = rt.workdir;
    const running = rt.run(["bash", "-c", "touch go; sleep 30 & wait"]);
    await waitFor(() => existsSync(join(dir, "go")));
    await rt.stop();
    assert.equal((await running).exitCode, 128 + 9);
    assert.equal(existsSync(dir), false);
  });

  it("stopConfirmed() throws when the workdir cannot be removed; stop() does not", async () => {
    const rt = makeLocal();
    await rt.start();
    await rt.write("locked/f.txt", "x");
    const locked = join(rt.workdir, "locked");
    const asRoot = process.getuid?.() === 0;
    const lock = asRoot ? ["chattr", "+i", join(locked, "f.txt")] : ["chmod", "555", locked];
    const unlock = asRoot ? ["chattr", "-i", join(locked, "f.txt")] : ["chmod", "755", locked];
    const locking = await spawnProgram(lock, { cwd: rt.workdir, env: hostEnv });
    assert.equal(locking.exitCode, 0, `cannot lock a file for this test: ${locking.stderr}`);
    try {
      await rt.stop();
      assert.equal(rt.stopped, true);
      await rejectsWith(rt.stopConfirmed(), /Cannot remove the local workdir/);
    } finally {
      await spawnProgram(unlock, { cwd: rt.workdir, env: hostEnv });
    }
    await rt.stopConfirmed();
    assert.equal(existsSync(rt.workdir), false);
    await rt.stopConfirmed();
  });

  it("stop removes what write() created outside the workdir, never a file that was there", async () => {
    const host = await scratchDir(); // stands for the host's /tmp
    const before = join(host, "before.txt");
    await writeFile(before, "the user's");
    const rt = makeLocal();
    await rt.start();
    await rt.write(join(host, "made", "deep", "messages.json"), "[]"); // folders made: the top one
    await rt.write(join(host, "loose.json"), "{}"); // a new file in a folder that was there
    await rt.write(before, "overwritten"); // there before: kept
    await rt.stopConfirmed();
    assert.deepEqual((await readdir(host)).sort(), ["before.txt"]);
    assert.equal(await readFile(before, "utf8"), "overwritten");
  });

  it("stop waits for a write in flight before removing what it made", async () => {
    const host = await scratchDir();
    const rt = makeLocal();
    await rt.start();
    await rt.write("first.txt", ""); // the workdir is made: the next write starts at once
    const big = new Uint8Array(32 << 20); // long enough to be under way when stop comes
    const writing = rt.write(join(host, "job", "blob.bin"), big);
    await new Promise((r) => setImmediate(r)); // the write has begun
    await rt.stopConfirmed();
    await writing; // it was let finish, then what it made was removed
    assert.deepEqual(await readdir(host), []);
  });

  it("keep_workdir keeps what write() created outside the workdir too", async () => {
    const host = await scratchDir();
    const rt = makeLocal({ keep_workdir: true });
    await rt.start();
    await rt.write(join(host, "made", "m.json"), "[]");
    await rt.stopConfirmed();
    assert.deepEqual(await readdir(host), ["made"]);
    await rm(rt.workdir, { recursive: true, force: true });
  });

  it("read() of a directory fails with a SandboxError", async () => {
    const rt = makeLocal();
    await rt.start();
    await rt.write("d/f.txt", "x");
    await rejectsWith(rt.read("d"), /Cannot read "d": not a regular file/);
  });
});

describe("spawnProgram", () => {
  it("gives the child exactly the env it is given", async () => {
    const r = await spawnProgram(["env"], { cwd: tmpdir(), env: { ...hostEnv, ONLY_ME: "1" } });
    const names = r.stdout.trim().split("\n").map((l) => l.split("=")[0]).sort();
    assert.deepEqual(names, ["ONLY_ME", "PATH"]);
  });

  it("reports a program that cannot be executed as 126", async () => {
    const file = join(await scratchDir(), "not-executable");
    await writeFile(file, "#!/bin/sh\necho hi\n", { mode: 0o644 });
    const r = await spawnProgram([file], { cwd: tmpdir(), env: hostEnv });
    assert.equal(r.exitCode, 126);
    assert.match(r.stderr, /not-executable/);
  });

  it("decodes UTF-8 characters split across chunks", async () => {
    const r = await spawnProgram(
      ["bash", "-c", "yes \u2713 | head -n 100000 | tr -d '\\n'"],
      { cwd: tmpdir(), env: hostEnv },
    );
    assert.equal(r.stdout, "\u2713".repeat(100000));
  });

  it("keeps at most maxOutputBytes of each stream and says so", async () => {
    const r = await spawnProgram(
      ["bash", "-c", "head -c 100000 /dev/zero | tr '\\0' b; echo e >&2"],
      { cwd: tmpdir(), env: hostEnv, maxOutputBytes: 10 },
    );
    assert.deepEqual(r, {
      exitCode: 0,
      stdout: "bbbbbbbbbb",
      stderr: "e\n",
      timedOut: false,
      aborted: false,
      truncated: true,
    });
  });

  it("a timeout kills a descendant that left the process group, and returns", async () => {
    const dir = await scratchDir();
    const r = await spawnProgram(
      ["bash", "-c", "setsid bash -c 'echo $$ > escaped.pid; exec sleep 30' & wait"],
      { cwd: dir, env: hostEnv, timeoutMs: 300 },
    );
    assert.equal(r.exitCode, TIMEOUT_EXIT_CODE);
    assert.equal(r.timedOut, true);
    const pid = Number(readFileSync(join(dir, "escaped.pid"), "utf8"));
    const alive = () => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && alive(); i++) await new Promise((r) => setTimeout(r, 20));
    if (alive()) process.kill(pid, "SIGKILL");
    assert.equal(alive(), false, `the escaped process ${pid} outlived the timeout`);
  });

  it("leaves no timer or listener keeping the process alive", async () => {
    const dir = await scratchDir();
    const script = join(dir, "script.ts");
    const spawnUrl = new URL("../kit/_runtime/spawn.ts", import.meta.url);
    await writeFile(
      script,
      `import { spawnProgram } from ${JSON.stringify(spawnUrl.href)};
const ac = new AbortController();
const r = await spawnProgram(["echo", "ok"], { cwd: ${JSON.stringify(dir)}, env: {PATH: ${
        JSON.stringify(hostEnv.PATH)
      }}, timeoutMs: 600000, signal: ac.signal });
console.log(r.stdout.trim());
`,
    );
    const argv = runtimeName() === "deno"
      ? [execPath(), "run", "-A", "--no-check", script]
      : [execPath(), script];
    // Were a timer of the child left armed, the script would outlive this 60 s limit.
    const r = await spawnProgram(argv, { cwd: dir, env: getAllEnv(), timeoutMs: 60000 });
    assert.equal(r.stdout, "ok\n", r.stderr);
    assert.equal(r.exitCode, 0);
  });
});

async function rejectsWith(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof SandboxError, `expected a SandboxError, got ${String(e)}`);
    assert.match(e.message, pattern);
    assert.ok(e.hint, "the error has a hint");
    return true;
  });
}

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(condition(), "condition never became true");
}
