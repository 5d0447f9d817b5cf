/**
 * `vf sandbox exec` with a standard input that stays open, as a CI step, a tool runner or
 * `child_process.spawn` leaves it: without `-i` the command runs and vf never reads its own
 * stdin; with `-i` each line written reaches the command as it arrives and the command sees
 * end of file when the pipe closes; a SIGTERM kills the command and confirm-stops the
 * sandbox within seconds. Real processes on the subprocess runtime, and the loopback Modal
 * (stdin streamed) and Prime (stdin taken whole) fakes for the sandbox ledger.
 */
import "./_builtins.ts";
import assert from "node:assert/strict";
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import process from "node:process";
import { after, before, describe, it } from "node:test";
import { cliArgv } from "./_cli.ts";
import { listSandboxes } from "../kit/runtime/ledger.ts";
import { closeModalConnections } from "../plugins/runtimes/modal/mod.ts";
import { setupModalEnv } from "./fakes/modal_env.ts";
import type { ModalTestEnv } from "./fakes/modal_env.ts";
import { type PrimeFake, startPrimeFake } from "./fakes/prime_server.ts";

/** A running `vf`, its output so far, and how it ended. */
interface Vf {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or the signal's name) and the time it took. */
  ended: Promise<{ code: number | null; signal: string | null; ms: number }>;
}

/** Starts `vf <args>` with a stdin pipe that stays open until the test closes it. */
function startVf(args: string[], env: Record<string, string | undefined>): Vf {
  const [cmd, ...rest] = cliArgv(args);
  const child = spawn(cmd, rest, {
    env: { ...process.env, ...env, NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const started = Date.now();
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (d: string) => out += d);
  child.stderr.setEncoding("utf8").on("data", (d: string) => err += d);
  const ended = new Promise<{ code: number | null; signal: string | null; ms: number }>((r) =>
    child.on("close", (code, signal) => r({ code, signal, ms: Date.now() - started }))
  );
  return { child, stdout: () => out, stderr: () => err, ended };
}

/** Waits for `ok()` (polled), failing after `ms`; a vf that ended first fails it at once. */
async function waitFor(vf: Vf, what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  let done = false;
  void vf.ended.then(() => done = true);
  while (!ok()) {
    if (done) assert.fail(`vf ended before ${what}:\n${vf.stderr()}`);
    if (Date.now() > until) assert.fail(`no ${what} within ${ms} ms:\n${vf.stderr()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The end of `vf`, failing (and killing it) when it takes longer than `ms`. */
async function endOf(vf: Vf, ms: number) {
  const timer = setTimeout(() => vf.child.kill("SIGKILL"), ms);
  try {
    const end = await vf.ended;
    assert.notEqual(end.signal, "SIGKILL", `vf did not end within ${ms} ms:\n${vf.stderr()}`);
    return end;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Sends SIGTERM to `vf` by pid: after `ChildProcess.kill()`, Deno's child_process reports
 * the signal it sent instead of the exit code the process chose.
 */
function terminate(vf: Vf): void {
  process.kill(vf.child.pid!, "SIGTERM");
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const SUBPROCESS = ["sandbox", "exec", "--runtime", "subprocess"];

describe("vf sandbox exec on the subprocess runtime, stdin left open", () => {
  it("without -i the command runs and vf exits: its own stdin is not read", async () => {
    const vf = startVf([...SUBPROCESS, "--", "sh", "-c", "cat; echo ran"], {});
    try {
      const end = await endOf(vf, 30_000);
      assert.equal(end.code, 0, vf.stderr());
      assert.equal(vf.stdout(), "ran\n", "the command's stdin was empty");
    } finally {
      vf.child.stdin.destroy();
    }
  });

  it("with -i each line reaches the command as written; closing the pipe is its EOF", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-exec-stdin-"));
    const first = join(dir, "first");
    const script = `read a; echo "$a" > "$1"; while read l; do echo "line $l"; done; echo EOF`;
    const vf = startVf([...SUBPROCESS, "-i", "--", "sh", "-c", script, "sh", first], {});
    vf.child.stdin.write("one\n");
    await waitFor(vf, "the first line at the command", () => existsSync(first));
    assert.equal(readFileSync(first, "utf8"), "one\n");
    vf.child.stdin.write("two\nthree\n");
    vf.child.stdin.end();
    const end = await endOf(vf, 30_000);
    assert.equal(end.code, 0, vf.stderr());
    assert.equal(vf.stdout(), "line two\nline three\nEOF\n");
  });

  it("a SIGTERM during a long command kills it and ends vf within seconds", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-exec-term-"));
    const pidFile = join(dir, "pid");
    const vf = startVf([
      ...SUBPROCESS,
      "-i",
      "--",
      "sh",
      "-c",
      'echo $$ > "$1"; exec sleep 120',
      "sh",
      pidFile,
    ], {});
    try {
      await waitFor(
        vf,
        "the command's start",
        () => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"),
      );
      const pid = Number(readFileSync(pidFile, "utf8"));
      assert.ok(alive(pid), "the command runs");
      const sent = Date.now();
      terminate(vf);
      const end = await endOf(vf, 10_000);
      assert.ok(Date.now() - sent < 5_000, `vf took ${Date.now() - sent} ms after the SIGTERM`);
      assert.equal(end.code, 143, `${end.signal}: ${vf.stderr()}`);
      assert.match(vf.stderr(), /stopping: killing the command/);
      assert.equal(alive(pid), false, "the command was killed");
    } finally {
      vf.child.kill("SIGKILL");
    }
  });
});

describe("vf sandbox exec on the Modal fake: streamed stdin, SIGTERM confirm-stops", () => {
  let modal: ModalTestEnv;
  before(async () => {
    modal = await setupModalEnv();
  });
  after(async () => {
    closeModalConnections();
    await modal.dispose();
  });

  it("-i streams a line to the command; a SIGTERM stops it and the ledger is empty", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-exec-modal-"));
    const got = join(dir, "got");
    const script = `read a; echo "$a" > "$1"; exec sleep 120`;
    const vf = startVf([
      "sandbox",
      "exec",
      "-i",
      "--runtime",
      "modal",
      "--",
      "sh",
      "-c",
      script,
      "sh",
      got,
    ], {});
    try {
      vf.child.stdin.write("streamed\n");
      await waitFor(
        vf,
        "the line at the command",
        () => existsSync(got) && readFileSync(got, "utf8") === "streamed\n",
      );
      const id = /sandbox (\S+) is ready/.exec(vf.stderr())?.[1];
      assert.ok(id, vf.stderr());
      const sent = Date.now();
      terminate(vf);
      const end = await endOf(vf, 15_000);
      assert.ok(Date.now() - sent < 8_000, `vf took ${Date.now() - sent} ms after the SIGTERM`);
      assert.equal(end.code, 143, `${end.signal}: ${vf.stderr()}`);
      assert.match(vf.stderr(), new RegExp(`sandbox ${id} stopped \\(confirmed\\)`));
      assert.equal(modal.fake.sandbox(id)?.result?.status, 3, "the sandbox was terminated");
      assert.deepEqual(
        listSandboxes().filter((e) => e.provider === "modal"),
        [],
        "the ledger is empty",
      );
    } finally {
      vf.child.kill("SIGKILL");
    }
  });
});

describe("vf sandbox exec on the Prime fake: stdin taken whole, SIGTERM confirm-stops", () => {
  let prime: PrimeFake;
  let cache = "";
  before(async () => {
    prime = await startPrimeFake();
    cache = mkdtempSync(join(tmpdir(), "vf-exec-prime-cache-"));
  });
  after(async () => {
    await prime.close();
  });
  const env = () => ({ ...prime.env(), VF_CACHE_DIR: cache });
  const PRIME = ["sandbox", "exec", "--runtime", "prime"];

  it("without -i an open stdin does not hold the command back", async () => {
    const vf = startVf([...PRIME, "--", "echo", "ran"], env());
    try {
      const end = await endOf(vf, 60_000);
      assert.equal(end.code, 0, vf.stderr());
      assert.equal(vf.stdout(), "ran\n");
    } finally {
      vf.child.stdin.destroy();
    }
  });

  it("-i: the command gets the whole of stdin once the pipe closes", async () => {
    const vf = startVf([...PRIME, "-i", "--", "sh", "-c", "cat; echo EOF"], env());
    vf.child.stdin.write("one\n");
    vf.child.stdin.end("two\n");
    const end = await endOf(vf, 60_000);
    assert.equal(end.code, 0, vf.stderr());
    assert.equal(vf.stdout(), "one\ntwo\nEOF\n");
  });

  it("a SIGTERM while -i waits for stdin stops the sandbox (confirmed) within seconds", async () => {
    const vf = startVf([...PRIME, "-i", "--", "cat"], env());
    try {
      await waitFor(vf, "the sandbox", () => /sandbox \S+ is ready/.test(vf.stderr()), 60_000);
      const id = /sandbox (\S+) is ready/.exec(vf.stderr())![1];
      const sent = Date.now();
      terminate(vf);
      const end = await endOf(vf, 15_000);
      assert.ok(Date.now() - sent < 8_000, `vf took ${Date.now() - sent} ms after the SIGTERM`);
      assert.equal(end.code, 143, `${end.signal}: ${vf.stderr()}`);
      assert.match(vf.stderr(), new RegExp(`sandbox ${id} stopped \\(confirmed\\)`));
      assert.equal(prime.liveSandboxes(), 0, "no live sandbox at the provider");
      const saved = process.env.VF_CACHE_DIR;
      process.env.VF_CACHE_DIR = cache;
      try {
        assert.deepEqual(listSandboxes().filter((e) => e.provider === "prime"), [], "ledger empty");
      } finally {
        if (saved === undefined) delete process.env.VF_CACHE_DIR;
        else process.env.VF_CACHE_DIR = saved;
      }
    } finally {
      vf.child.kill("SIGKILL");
    }
  });

  it("a SIGTERM during a long command stops it and the sandbox within seconds", async () => {
    const vf = startVf([...PRIME, "--", "sleep", "120"], env());
    try {
      await waitFor(vf, "the sandbox", () => /sandbox \S+ is ready/.test(vf.stderr()), 60_000);
      await new Promise((r) => setTimeout(r, 500)); // the job is launched
      const sent = Date.now();
      terminate(vf);
      const end = await endOf(vf, 15_000);
      assert.ok(Date.now() - sent < 8_000, `vf took ${Date.now() - sent} ms after the SIGTERM`);
      assert.equal(end.code, 143, `${end.signal}: ${vf.stderr()}`);
      assert.match(vf.stderr(), /stopped \(confirmed\)/);
      assert.equal(prime.liveSandboxes(), 0, "no live sandbox at the provider");
    } finally {
      vf.child.kill("SIGKILL");
    }
  });
});
