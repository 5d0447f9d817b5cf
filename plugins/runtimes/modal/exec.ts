/**
 * One command in a Modal sandbox through the task command router (the provider's `exec` of
 * `kit/remote/provider.ts`): `TaskExecStart` with piped stdout and stderr, stdin written in
 * chunks as it arrives then closed, both outputs read to their end, then `TaskExecWait`. Environment
 * variables travel in an ephemeral secret, as the official SDK sends them. Killing a
 * command (timeout, abort) is the remote-sandbox base's process-group protocol; here an
 * abort of the request's signal cancels the router calls.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { concatBytes, type ExecRequest, type ExecResult, SandboxError } from "../../../kit/mod.ts";
import type { ModalApi } from "./api.ts";
import * as M from "./messages.ts";
import type { TaskRouter } from "./router.ts";

/** The SDK's guard on the total length of a command's arguments. */
const ARG_MAX_BYTES = 65536;
/** Bytes per `TaskExecStdinWrite`. */
const STDIN_CHUNK = 4 * 1024 * 1024;

/**
 * Runs one command through the router and collects its output; the exit code is the
 * command's, or 128+N when signal N killed it. `cwd` is the exec's workdir field.
 */
export async function execInSandbox(
  api: ModalApi,
  router: TaskRouter,
  request: ExecRequest,
): Promise<ExecResult> {
  const { argv, signal } = request;
  const total = argv.reduce((n, a) => n + a.length, 0);
  if (total > ARG_MAX_BYTES) {
    throw new SandboxError(
      `Cannot run "${
        argv[0]
      }": its arguments are ${total} bytes, over Modal's limit of ${ARG_MAX_BYTES}`,
      { hint: "Write long input to a file with write() and pass its path instead" },
    );
  }
  const execId = randomUUID();
  const env = request.env ?? {};
  const secretIds = Object.keys(env).length > 0 ? [await api.ephemeralSecret(env, signal)] : [];
  await router.execStart({
    taskId: router.taskId,
    execId,
    commandArgs: argv,
    stdoutConfig: M.StdioConfig.PIPE,
    stderrConfig: M.StdioConfig.PIPE,
    workdir: request.cwd,
    secretIds,
    runtimeDebug: false,
  }, signal);
  // stdin is written as it arrives (a stream) or at once (bytes), then closed with EOF
  const stdin = (async () => {
    const input = request.stdinStream ?? request.stdin ?? new Uint8Array(0);
    let offset = 0;
    for await (const data of input instanceof Uint8Array ? [input] : input) {
      for (let at = 0; at < data.byteLength; at += STDIN_CHUNK) {
        const chunk = data.subarray(at, at + STDIN_CHUNK);
        await router.stdinWrite(execId, offset, chunk, false, signal);
        offset += chunk.byteLength;
      }
    }
    await router.stdinWrite(execId, offset, new Uint8Array(0), true, signal);
  })();
  // A stdin failure (e.g. the command exited without reading) must not fail the run.
  stdin.catch(() => {});
  const collect = async (fd: number): Promise<Uint8Array> => {
    const parts: Uint8Array[] = [];
    for await (const data of router.stdioRead(execId, fd, { signal })) parts.push(data);
    return concatBytes(parts);
  };
  const outputs = Promise.all([collect(M.StdioFd.STDOUT), collect(M.StdioFd.STDERR)]);
  // Awaited below; marked handled now so a failure while awaiting the exit is not unhandled.
  outputs.catch(() => {});
  const status = await router.execWait(execId, { signal });
  const [stdout, stderr] = await outputs;
  const exitCode = status.code ?? (status.signal !== undefined ? 128 + status.signal : 1);
  return { exitCode, stdout, stderr };
}
