/**
 * The shared conformance suite of the {@link Runtime} contract. Every runtime (local,
 * and the remote ones against their loopback fakes) calls {@link runtimeConformance}.
 * It uses only the Runtime interface and POSIX tools inside the runtime (bash, cat,
 * sleep, kill, printf, wc, head, tr, sed, cut).
 *
 * @module
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { SandboxError } from "../../kit/errors.ts";
import type { Runtime } from "../../kit/runtime/runtime.ts";
import { TIMEOUT_EXIT_CODE } from "../../kit/runtime/runtime.ts";

/**
 * Prints `gone` once the process whose pid is in file `$1` no longer exists (a zombie
 * counts as gone: it has been killed and only waits to be reaped), else `alive` after
 * `$2` probes 50 ms apart.
 */
const PROCESS_GONE_SCRIPT = `p=$(cat "$1") || exit 2
i=0
while [ "$i" -lt "$2" ]; do
  kill -0 "$p" 2>/dev/null || { echo gone; exit 0; }
  s=""
  if [ -r "/proc/$p/stat" ]; then s=$(sed 's/.*) //' "/proc/$p/stat" | cut -c1)
  elif command -v ps >/dev/null 2>&1; then s=$(ps -o stat= -p "$p" 2>/dev/null)
  fi
  case "$s" in Z*) echo gone; exit 0 ;; esac
  i=$((i + 1))
  [ "$i" -lt "$2" ] && sleep 0.05
done
echo alive`;

/** A command that starts a grandchild `sleep 30`, records its pid in `pidFile`, and waits. */
function grandchildCommand(pidFile: string): string[] {
  return [
    "bash",
    "-c",
    `echo started; sleep 30 & echo $! > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; wait`,
  ];
}

/** Asks the runtime itself whether the process recorded in `pidFile` is gone. */
async function processState(rt: Runtime, pidFile: string, probes = 20): Promise<string> {
  const r = await rt.run(["bash", "-c", PROCESS_GONE_SCRIPT, "probe", pidFile, String(probes)]);
  assert.equal(r.exitCode, 0, `probe failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** Polls `rt.read(path)` until the file exists (the command has reached that point). */
async function waitForFile(rt: Runtime, path: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    try {
      await rt.read(path);
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  assert.fail(`"${path}" never appeared`);
}

/** Asserts that `promise` rejects with a SandboxError whose message matches `pattern`. */
async function rejectsSandbox(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof SandboxError, `expected a SandboxError, got ${String(e)}`);
    assert.match(e.message, pattern);
    return true;
  });
}

const decode = (b: Uint8Array) => new TextDecoder().decode(b);

/**
 * Declares `describe(label + " conformance")`: the behaviour every {@link Runtime} must
 * have. `makeRuntime` returns a new, not yet started runtime on every call; the suite
 * starts and stops them.
 */
export function runtimeConformance(
  label: string,
  makeRuntime: () => Runtime | Promise<Runtime>,
): void {
  describe(`${label} conformance`, () => {
    let rt: Runtime;
    const made: Runtime[] = [];
    const fresh = async () => {
      const r = await makeRuntime();
      made.push(r);
      return r;
    };

    before(async () => {
      rt = await fresh();
      await rt.start();
    });
    after(async () => {
      for (const r of made) await r.stop();
    });

    it("start() provisions a live runtime with an identity and a workdir", async () => {
      assert.equal(rt.stopped, false);
      assert.equal(await rt.alive(), true);
      assert.ok(rt.info.type.length > 0);
      assert.equal(typeof rt.info.id, "string");
      assert.ok(rt.workdir.startsWith("/"), `workdir is not absolute: ${rt.workdir}`);
      assert.equal(typeof rt.isLocal, "boolean");
      if (rt.isLocal) assert.equal(rt.timeoutS, null);
    });

    it("run() returns stdout and exit code 0", async () => {
      assert.deepEqual(await rt.run(["echo", "hello", "world"]), {
        exitCode: 0,
        stdout: "hello world\n",
        stderr: "",
      });
    });

    it("run() passes argv without a shell", async () => {
      const r = await rt.run(["printf", "%s|", "a b", "$HOME", "*", "'q'"]);
      assert.equal(r.stdout, "a b|$HOME|*|'q'|");
    });

    it("run() returns the exit code", async () => {
      assert.equal((await rt.run(["true"])).exitCode, 0);
      assert.equal((await rt.run(["bash", "-c", "exit 3"])).exitCode, 3);
      assert.equal((await rt.run(["false"])).exitCode, 1);
    });

    it("run() captures stderr separately from stdout", async () => {
      const r = await rt.run(["bash", "-c", "echo out; echo err >&2; echo out2"]);
      assert.equal(r.stdout, "out\nout2\n");
      assert.equal(r.stderr, "err\n");
    });

    it("run() decodes UTF-8 output and keeps large output whole", async () => {
      const r = await rt.run(["printf", "h\u00e9llo \u2713 \u{1F600}"]);
      assert.equal(r.stdout, "h\u00e9llo \u2713 \u{1F600}");
      const big = await rt.run(["bash", "-c", "head -c 300000 /dev/zero | tr '\\0' a"]);
      assert.equal(big.stdout.length, 300000);
      assert.equal(big.stdout, "a".repeat(300000));
    });

    it("run() passes the call's env to that call only", async () => {
      const cmd = ["bash", "-c", 'printf "%s|%s" "${VF_CONF_A-unset}" "${VF_CONF_B-unset}"'];
      const r = await rt.run(cmd, { env: { VF_CONF_A: "x y", VF_CONF_B: "" } });
      assert.equal(r.stdout, "x y|");
      assert.equal((await rt.run(cmd)).stdout, "unset|unset");
    });

    it("run() runs in the workdir, or in cwd relative to it or absolute", async () => {
      await rt.write("cwd-root.txt", "at root");
      await rt.write("cwd/sub dir/here.txt", "in sub");
      assert.equal((await rt.run(["cat", "cwd-root.txt"])).stdout, "at root");
      const rel = await rt.run(["cat", "here.txt"], { cwd: "cwd/sub dir" });
      assert.equal(rel.stdout, "in sub");
      const abs = await rt.run(["cat", "here.txt"], { cwd: `${rt.workdir}/cwd/sub dir` });
      assert.equal(abs.stdout, "in sub");
    });

    it("run() feeds stdin when given, else stdin is at end of file", async () => {
      assert.equal(
        (await rt.run(["cat"], { stdin: "line 1\nline 2\n" })).stdout,
        "line 1\nline 2\n",
      );
      const bytes = new TextEncoder().encode("bytes \u00e9");
      assert.equal((await rt.run(["cat"], { stdin: bytes })).stdout, "bytes \u00e9");
      assert.deepEqual(await rt.run(["cat"]), { exitCode: 0, stdout: "", stderr: "" });
    });

    it("run() takes a stdin stream: as it arrives where streamsStdin, else whole; EOF at its end", async () => {
      const seen = `stdin-seen-${Date.now()}.txt`;
      let sawFirst: boolean | null = null;
      const rtRef = rt;
      async function* lines(): AsyncGenerator<Uint8Array> {
        yield new TextEncoder().encode("first\n");
        if (rtRef.streamsStdin) {
          // the command has the first line before the stream goes on
          const until = Date.now() + 20_000;
          for (;;) {
            const probe = await rtRef.run(["cat", seen]);
            if (probe.exitCode === 0 && probe.stdout === "first\n") break;
            assert.ok(Date.now() < until, "the first line did not reach the command");
            await new Promise((r) => setTimeout(r, 50));
          }
          sawFirst = true;
        }
        yield new TextEncoder().encode("second\n");
      }
      const script = `read a; echo "$a" > "$1"; cat; echo EOF`;
      const r = await rt.run(["sh", "-c", script, "sh", seen], { stdin: lines() });
      assert.deepEqual(r, { exitCode: 0, stdout: "second\nEOF\n", stderr: "" });
      assert.equal(sawFirst, rt.streamsStdin ? true : null);
    });

    it("run() with a stdin stream that never ends: the signal still stops the command", async () => {
      const never: AsyncIterable<Uint8Array> = {
        [Symbol.asyncIterator]: () => ({ next: () => new Promise(() => {}) }),
      };
      const ctrl = new AbortController();
      const timer = setTimeout(() => ctrl.abort(), 500);
      const started = Date.now();
      try {
        const r = await rt.run(["cat"], { stdin: never, signal: ctrl.signal });
        assert.equal(r.exitCode, 137);
      } finally {
        clearTimeout(timer);
      }
      assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
    });

    it("the liveness probe used below detects a live process (control)", async () => {
      await rt.run(["bash", "-c", "sleep 30 >/dev/null 2>&1 & echo $! > control.pid"]);
      try {
        assert.equal(await processState(rt, "control.pid", 1), "alive");
      } finally {
        await rt.run(["bash", "-c", 'kill -9 "$(cat control.pid)"']);
      }
      assert.equal(await processState(rt, "control.pid"), "gone");
    });

    it("run() kills the whole process group on timeout and returns 124", async () => {
      const r = await rt.run(grandchildCommand("timeout.pid"), { timeoutMs: 400 });
      assert.equal(r.exitCode, TIMEOUT_EXIT_CODE);
      assert.equal(await processState(rt, "timeout.pid"), "gone");
    });

    it("run() kills the whole process group when its signal aborts", async () => {
      const ac = new AbortController();
      const running = rt.run(grandchildCommand("abort.pid"), { signal: ac.signal });
      await waitForFile(rt, "abort.pid");
      ac.abort();
      const r = await running;
      assert.notEqual(r.exitCode, 0);
      assert.equal(await processState(rt, "abort.pid"), "gone");
    });

    it("run() with an already aborted signal does not run the command", async () => {
      const r = await rt.run(["bash", "-c", "echo ran > pre-aborted.txt"], {
        signal: AbortSignal.abort(),
      });
      assert.notEqual(r.exitCode, 0);
      await rejectsSandbox(rt.read("pre-aborted.txt"), /pre-aborted\.txt/);
    });

    it("write() and read() round-trip text and every byte value, in nested dirs", async () => {
      await rt.write("rw/text.txt", "h\u00e9llo\n");
      assert.equal(decode(await rt.read("rw/text.txt")), "h\u00e9llo\n");
      const all = new Uint8Array(256).map((_, i) => i);
      await rt.write("rw/deep/er/all.bin", all);
      const back = await rt.read("rw/deep/er/all.bin");
      assert.ok(back instanceof Uint8Array);
      assert.deepEqual([...back], [...all]);
      assert.equal((await rt.run(["wc", "-c"], { stdin: back })).stdout.trim(), "256");
      const viaCommand = await rt.run(["bash", "-c", "wc -c < rw/deep/er/all.bin"]);
      assert.equal(viaCommand.stdout.trim(), "256");
    });

    it("write() overwrites, and accepts absolute paths", async () => {
      await rt.write("rw/over.txt", "a long first version");
      await rt.write(`${rt.workdir}/rw/over.txt`, "short");
      assert.equal(decode(await rt.read("rw/over.txt")), "short");
      assert.equal(decode(await rt.read(`${rt.workdir}/rw/over.txt`)), "short");
    });

    it("read() sees files made by commands", async () => {
      await rt.run(["bash", "-c", "mkdir -p made && printf 'x\\001\\377y' > made/file.bin"]);
      assert.deepEqual([...await rt.read("made/file.bin")], [0x78, 0x01, 0xff, 0x79]);
    });

    it("read() refuses a file larger than maxBytes, naming the size and the limit", async () => {
      await rt.write("limit.bin", new Uint8Array(100).fill(7));
      assert.equal((await rt.read("limit.bin", { maxBytes: 100 })).byteLength, 100);
      await rejectsSandbox(rt.read("limit.bin", { maxBytes: 99 }), /100.*99|99.*100/);
    });

    it("read() of a missing file fails with a SandboxError naming it", async () => {
      await rejectsSandbox(rt.read("no/such/file.txt"), /no\/such\/file\.txt/);
    });

    it("alive() is true after start and false after stop", async () => {
      const r = await fresh();
      await r.start();
      assert.equal(await r.alive(), true);
      await r.stop();
      assert.equal(await r.alive(), false);
      assert.equal(r.stopped, true);
    });

    it("stop() and stopConfirmed() are safe before start", async () => {
      const r = await fresh();
      await r.stop();
      await r.stopConfirmed();
      await r.start();
      assert.equal(r.stopped, false);
      assert.equal((await r.run(["echo", "ok"])).stdout, "ok\n");
      await r.stop();
    });

    it("stop() is idempotent and never throws", async () => {
      const r = await fresh();
      await r.start();
      await r.stop();
      await r.stop();
      assert.equal(r.stopped, true);
    });

    it("stopConfirmed() frees the runtime, sets stopped, and is idempotent", async () => {
      const r = await fresh();
      await r.start();
      await r.stopConfirmed();
      assert.equal(r.stopped, true);
      assert.equal(await r.alive(), false);
      await r.stopConfirmed();
      await r.stop();
      assert.equal(r.stopped, true);
    });

    it("run(), write() and read() after stop fail with a clear SandboxError", async () => {
      const r = await fresh();
      await r.start();
      await r.write("before.txt", "x");
      await r.stop();
      for (
        const attempt of [
          () => r.run(["echo", "hi"]),
          () => r.write("after.txt", "x"),
          () => r.read("before.txt"),
        ]
      ) {
        await assert.rejects(attempt(), (e: unknown) => {
          assert.ok(e instanceof SandboxError, `expected a SandboxError, got ${String(e)}`);
          assert.match(e.message, /^Cannot .*: runtime is stopped$/);
          assert.ok(e.hint, "the error has a hint");
          return true;
        });
      }
    });

    it("start() after stop gives a fresh, working runtime", async () => {
      const r = await fresh();
      await r.start();
      await r.write("old.txt", "from the first life");
      await r.stopConfirmed();
      await r.start();
      assert.equal(r.stopped, false);
      assert.equal(await r.alive(), true);
      assert.equal(typeof r.info.id, "string");
      assert.equal((await r.run(["echo", "again"])).stdout, "again\n");
      await rejectsSandbox(r.read("old.txt"), /old\.txt/);
      await r.stopConfirmed();
      assert.equal(r.stopped, true);
    });
  });
}
