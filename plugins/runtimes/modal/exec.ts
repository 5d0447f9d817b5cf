/**
 * One command in a Modal sandbox through the task command router: `TaskExecStart` with
 * piped stdout and stderr, stdin written in chunks, both outputs read to their end, then
 * `TaskExecWait`. Environment variables travel in an ephemeral secret, as the official SDK
 * sends them. The router has no kill RPC, so a command given a timeout or an abort signal
 * runs under {@link RUN_WRAPPER} in its own process group, which a second exec SIGKILLs
 * ({@link KILL_SCRIPT}); a command killed for its timeout returns exit code 124, one killed
 * by an abort 137.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { concatBytes, errorMessage, SandboxError, TIMEOUT_EXIT_CODE } from "../../../kit/mod.ts";
import type { ModalApi } from "./api.ts";
import { execHint } from "./failures.ts";
import * as M from "./messages.ts";
import type { TaskRouter } from "./router.ts";
import { KILL_SCRIPT, RUN_WRAPPER } from "./scripts.ts";

/** The SDK's guard on the total length of a command's arguments. */
const ARG_MAX_BYTES = 65536;
/** Bytes per `TaskExecStdinWrite`. */
const STDIN_CHUNK = 4 * 1024 * 1024;
/** After killing a command, how long to wait for its output streams to close. */
const KILL_GRACE_MS = 5000;
/** Exit code of a command killed by SIGKILL. */
const KILLED_EXIT_CODE = 128 + 9;

/** The sandbox a command runs in. */
export interface ExecTarget {
  router: TaskRouter;
  api: ModalApi;
  /** Controllers of the execs in flight (teardown aborts them). */
  inflight: Set<AbortController>;
  /** Receives warnings (a kill that failed). */
  log: (message: string) => void;
}

/** What a command returned. */
export interface ExecResult {
  exitCode: number;
  stdout: Uint8Array;
  stderr: Uint8Array;
}

/** How to run a command. */
export interface ExecOptions {
  stdin?: Uint8Array | undefined;
  /** Working directory field of the exec (absolute), or none. */
  workdir?: string | undefined;
  env?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
  timeoutMs?: number | undefined;
}

/**
 * Runs one command through the router and collects its output. With a timeout or a
 * signal the command runs under {@link RUN_WRAPPER} so it can be killed as a group.
 */
export async function execInSandbox(
  sandbox: ExecTarget,
  argv: string[],
  options: ExecOptions = {},
): Promise<ExecResult> {
  const { router, api } = sandbox;
  const control = new AbortController();
  sandbox.inflight.add(control);
  const internal = control.signal;
  const killable = options.signal !== undefined || options.timeoutMs !== undefined;
  const execId = randomUUID();
  const pidFile = `/tmp/.vf-exec-${execId}.pid`;
  const commandArgs = killable ? ["sh", "-c", RUN_WRAPPER, "vf-run", pidFile, ...argv] : argv;
  const total = commandArgs.reduce((n, a) => n + a.length, 0);
  if (total > ARG_MAX_BYTES) {
    sandbox.inflight.delete(control);
    throw new SandboxError(
      `Cannot run "${
        argv[0]
      }": its arguments are ${total} bytes, over Modal's limit of ${ARG_MAX_BYTES}`,
      { hint: "Write long input to a file with write() and pass its path instead" },
    );
  }
  let killRequested: "timeout" | "abort" | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let killing: Promise<void> | null = null;
  const requestKill = (why: "timeout" | "abort") => {
    if (killRequested !== null) return;
    killRequested = why;
    killing = execInSandbox(sandbox, ["sh", "-c", KILL_SCRIPT, "vf-kill", pidFile]).then(
      () => {},
      (e) => sandbox.log(`modal: cannot kill exec ${execId}: ${errorMessage(e)}`),
    );
  };
  const onAbort = () => requestKill("abort");
  try {
    if (options.signal?.aborted) {
      return { exitCode: KILLED_EXIT_CODE, stdout: new Uint8Array(), stderr: new Uint8Array() };
    }
    const env = options.env ?? {};
    const secretIds = Object.keys(env).length > 0 ? [await api.ephemeralSecret(env, internal)] : [];
    await router.execStart({
      taskId: router.taskId,
      execId,
      commandArgs,
      stdoutConfig: M.StdioConfig.PIPE,
      stderrConfig: M.StdioConfig.PIPE,
      workdir: options.workdir,
      secretIds,
      runtimeDebug: false,
    }, internal);
    if (options.timeoutMs !== undefined && Number.isFinite(options.timeoutMs)) {
      timer = setTimeout(() => requestKill("timeout"), Math.max(0, options.timeoutMs));
    }
    if (options.signal?.aborted) requestKill("abort");
    else options.signal?.addEventListener("abort", onAbort, { once: true });

    const stdin = (async () => {
      const data = options.stdin ?? new Uint8Array(0);
      let offset = 0;
      while (offset < data.byteLength) {
        const chunk = data.subarray(offset, offset + STDIN_CHUNK);
        await router.stdinWrite(execId, offset, chunk, false, internal);
        offset += chunk.byteLength;
      }
      await router.stdinWrite(execId, offset, new Uint8Array(0), true, internal);
    })();
    const collect = async (fd: number): Promise<Uint8Array> => {
      const parts: Uint8Array[] = [];
      for await (const data of router.stdioRead(execId, fd, { signal: internal })) {
        parts.push(data);
      }
      return concatBytes(parts);
    };
    const outputs = Promise.all([collect(M.StdioFd.STDOUT), collect(M.StdioFd.STDERR)]);
    // Awaited below; marked handled now so a failure while awaiting `exit` is not unhandled.
    outputs.catch(() => {});
    const exit = router.execWait(execId, { signal: internal });
    // A stdin failure (e.g. the command exited without reading) must not fail the run.
    stdin.catch(() => {});
    const status = await exit;
    let out: Uint8Array;
    let err: Uint8Array;
    if (killRequested !== null) {
      let grace: ReturnType<typeof setTimeout> | undefined;
      const graceful = await Promise.race([
        outputs,
        new Promise<null>((r) => grace = setTimeout(() => r(null), KILL_GRACE_MS)),
      ]).finally(() => clearTimeout(grace));
      if (graceful === null) {
        control.abort();
        [out, err] = [new Uint8Array(), new Uint8Array()];
      } else [out, err] = graceful;
    } else [out, err] = await outputs;
    await (killing as Promise<void> | null);
    let exitCode = status.code !== undefined
      ? status.code
      : status.signal !== undefined
      ? 128 + status.signal
      : 1;
    if (killRequested === "timeout") exitCode = TIMEOUT_EXIT_CODE;
    else if (killRequested === "abort" && exitCode === 0) exitCode = KILLED_EXIT_CODE;
    return { exitCode, stdout: out, stderr: err };
  } catch (e) {
    if (internal.aborted) {
      return { exitCode: KILLED_EXIT_CODE, stdout: new Uint8Array(), stderr: new Uint8Array() };
    }
    if (e instanceof SandboxError) throw e;
    throw new SandboxError(`modal exec of "${argv[0]}" failed: ${errorMessage(e)}`, {
      hint: execHint(e),
      cause: e,
    });
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    options.signal?.removeEventListener("abort", onAbort);
    sandbox.inflight.delete(control);
  }
}
