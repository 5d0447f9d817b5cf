/**
 * A live program in a Modal sandbox (the provider's `spawn` of `kit/remote/provider.ts`):
 * one `TaskExecStart` whose stdin is written chunk by chunk as the host writes it
 * (offset-addressed `TaskExecStdinWrite`s, EOF when the host closes it), whose stdout is
 * streamed as `TaskExecStdioRead` yields it, and whose end is `TaskExecWait`. The program
 * runs under the process-group wrapper, so `kill()` ends all it started with one short
 * exec; a router that fails (the sandbox gone, its connection dropped) ends it too.
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import {
  groupWrapperArgv,
  killCommand,
  type ProcessExit,
  type RuntimeProcess,
} from "../../../kit/mod.ts";
import type { ModalApi } from "./api.ts";
import { execInSandbox } from "./exec.ts";
import * as M from "./messages.ts";
import type { TaskRouter } from "./router.ts";

/** Lines of stderr kept for errors. */
const STDERR_TAIL_LINES = 40;
/** How long a killed program may take to report its end before its calls are cut. */
const KILL_GRACE_MS = 5_000;

/** Starts `argv` in the sandbox with its stdin and stdout open. */
export async function spawnLiveInSandbox(
  api: ModalApi,
  router: TaskRouter,
  request: { argv: string[]; cwd?: string | undefined; env?: Record<string, string> | undefined },
): Promise<RuntimeProcess> {
  const execId = randomUUID();
  const pgidFile = `/tmp/vf-live-${execId}.pgid`;
  const cut = new AbortController();
  const signal = cut.signal;
  const env = request.env ?? {};
  const secretIds = Object.keys(env).length > 0 ? [await api.ephemeralSecret(env)] : [];
  await router.execStart({
    taskId: router.taskId,
    execId,
    commandArgs: groupWrapperArgv(pgidFile, request.argv),
    stdoutConfig: M.StdioConfig.PIPE,
    stderrConfig: M.StdioConfig.PIPE,
    workdir: request.cwd,
    secretIds,
    runtimeDebug: false,
  });
  let offset = 0;
  const stdin = new WritableStream<Uint8Array>({
    write: async (chunk) => {
      await router.stdinWrite(execId, offset, chunk, false, signal);
      offset += chunk.byteLength;
    },
    close: async () => {
      await router.stdinWrite(execId, offset, new Uint8Array(0), true, signal);
    },
  });
  const output = router.stdioRead(execId, M.StdioFd.STDOUT, { signal });
  const stdout = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      try {
        const next = await output.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch {
        controller.close(); // the router failed: the program's output ends here
      }
    },
    cancel: async () => {
      await output.return(undefined);
    },
  });
  const tail: string[] = [];
  let partial = "";
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for await (const data of router.stdioRead(execId, M.StdioFd.STDERR, { signal })) {
        const lines = (partial + decoder.decode(data, { stream: true })).split("\n");
        partial = lines.pop() ?? "";
        tail.push(...lines);
        tail.splice(0, Math.max(0, tail.length - STDERR_TAIL_LINES));
      }
    } catch {
      // ends with the program or its router
    }
  })();
  const exited: Promise<ProcessExit> = router.execWait(execId, { signal }).then(
    (s) => ({
      exitCode: s.code ?? (s.signal !== undefined ? 128 + s.signal : 1),
      startError: null,
    }),
    () => ({ exitCode: 137, startError: null }),
  );
  void exited.then(() => cut.abort());
  let killing: Promise<ProcessExit> | null = null;
  return {
    stdin,
    stdout,
    exited,
    stderrTail: () => partial === "" ? [...tail] : [...tail, partial],
    kill: () =>
      killing ??= (async () => {
        if (!signal.aborted) {
          await execInSandbox(api, router, { argv: killCommand(pgidFile), timeoutS: 10 })
            .catch(() => {});
        }
        const late = setTimeout(() => cut.abort(), KILL_GRACE_MS);
        const exit = await exited;
        clearTimeout(late);
        return exit;
      })(),
  };
}
