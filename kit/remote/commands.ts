/**
 * Running one command in a remote sandbox under the process-group protocol
 * (`kit/remote/process_group.ts`), attached or detached. At its timeout the command's whole
 * process group is killed and the exit code is 124; on an abort it is killed and the exit
 * code is 137 (a signal already aborted runs nothing), as the local runtime does.
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import type { SandboxError } from "../errors.ts";
import { errorMessage } from "../errors.ts";
import { type ProgramResult, type RuntimeProcess, TIMEOUT_EXIT_CODE } from "../runtime/runtime.ts";
import { concatBytes } from "../util/bytes.ts";
import { sleep } from "../util/sleep.ts";
import { decodeText, putFile } from "./files.ts";
import {
  groupWrapperArgv,
  jobLaunchArgv,
  jobPaths,
  killCommand,
  parseExitFile,
} from "./process_group.ts";
import type { ExecRequest, SandboxJobs, SandboxProvider } from "./provider.ts";

/** Exit code of a command cancelled through its signal (128 + SIGKILL). */
const ABORT_EXIT_CODE = 137;
/** After killing an attached command, how long to wait for its exec to end. */
const KILL_GRACE_MS = 5000;
/** Output tail read from a finished job (as the Prime SDK reads it). */
const OUTPUT_TAIL_BYTES = 10 * 1024 * 1024;

/** One command, resolved against the sandbox (absolute cwd, bytes or a stream for stdin). */
export interface CommandSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: Uint8Array | AsyncIterable<Uint8Array> | undefined;
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** The sandbox a command runs in. */
export interface CommandTarget<H> {
  provider: SandboxProvider<H>;
  handle: H;
  id: string;
  log: (message: string) => void;
  /** Aborted by teardown: attached commands end at once. */
  teardown: AbortSignal;
  /** The SandboxError reporting a provider failure (`what` defaults to "<name> exec failed"). */
  fail(error: unknown, what?: string): SandboxError;
}

const aborted = (): ProgramResult => ({ exitCode: ABORT_EXIT_CODE, stdout: "", stderr: "" });

/** The bytes of `stream` to its end, or null once `signal` aborts (the read is left behind). */
async function readWhole(
  stream: AsyncIterable<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<Uint8Array | null> {
  if (signal?.aborted) return null;
  let onAbort = () => {};
  const stop = new Promise<null>((resolve) => onAbort = () => resolve(null));
  signal?.addEventListener("abort", onAbort, { once: true });
  const read = (async () => {
    const parts: Uint8Array[] = [];
    try {
      for await (const chunk of stream) parts.push(chunk);
    } catch {
      // a failing source ends stdin, as it does for an attached command
    }
    return concatBytes(parts);
  })();
  read.catch(() => {});
  try {
    return await Promise.race([read, stop]);
  } finally {
    signal?.removeEventListener("abort", onAbort);
  }
}

/** Runs `spec` with one exec that lasts as long as the command; kills via a second exec. */
export async function runAttached<H>(
  t: CommandTarget<H>,
  spec: CommandSpec,
): Promise<ProgramResult> {
  const { provider, handle } = t;
  if (spec.signal?.aborted) return aborted();
  if (spec.stdin !== undefined && !(spec.stdin instanceof Uint8Array) && !provider.streamsStdin) {
    const whole = await readWhole(spec.stdin, spec.signal);
    if (whole === null) return aborted();
    spec = { ...spec, stdin: whole };
  }
  const control = new AbortController();
  const onTeardown = () => control.abort();
  t.teardown.addEventListener("abort", onTeardown, { once: true });
  const killable = spec.signal !== undefined || spec.timeoutMs !== undefined;
  const pgidFile = `/tmp/.vf-exec-${randomBytes(8).toString("hex")}.pid`;
  let killed: "timeout" | "abort" | null = null;
  let killing: Promise<void> | null = null;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  let expire = () => {};
  const grace = new Promise<null>((resolve) => expire = () => resolve(null));
  const kill = (why: "timeout" | "abort") => {
    if (killed !== null) return;
    killed = why;
    killing = provider.exec(handle, { argv: killCommand(pgidFile), timeoutS: 30 }).then(
      () => {},
      (e) =>
        t.log(`${provider.name} sandbox ${t.id}: could not kill a command: ${errorMessage(e)}`),
    ).finally(() => graceTimer = setTimeout(expire, KILL_GRACE_MS));
  };
  const onAbort = () => kill("abort");
  const timer = spec.timeoutMs === undefined || !Number.isFinite(spec.timeoutMs)
    ? undefined
    : setTimeout(() => kill("timeout"), Math.max(0, spec.timeoutMs));
  spec.signal?.addEventListener("abort", onAbort, { once: true });
  const input = spec.stdin ?? new Uint8Array(0);
  const exec = provider.exec(handle, {
    argv: killable ? groupWrapperArgv(pgidFile, spec.argv) : spec.argv,
    cwd: spec.cwd,
    env: spec.env,
    ...(input instanceof Uint8Array ? { stdin: input } : { stdinStream: input }),
    signal: control.signal,
  });
  exec.catch(() => {});
  try {
    const r = await Promise.race([exec, grace]);
    await killing;
    if (r === null) control.abort(); // the kill did not end the exec within the grace
    const stdout = r === null ? "" : decodeText(r.stdout);
    const stderr = r === null ? "" : decodeText(r.stderr);
    let exitCode = r?.exitCode ?? ABORT_EXIT_CODE;
    if (killed === "timeout") exitCode = TIMEOUT_EXIT_CODE;
    else if (killed === "abort" && exitCode === 0) exitCode = ABORT_EXIT_CODE;
    return { exitCode, stdout, stderr };
  } catch (e) {
    if (control.signal.aborted) return aborted();
    throw t.fail(e);
  } finally {
    clearTimeout(timer);
    clearTimeout(graceTimer);
    spec.signal?.removeEventListener("abort", onAbort);
    t.teardown.removeEventListener("abort", onTeardown);
  }
}

/**
 * Runs `spec` as a detached job and polls its exit file until it exits, riding out
 * transient provider failures on the same job for `jobs.timing.recoveryMs`. `finished`
 * holds directories of earlier jobs, removed on the way by the next launch.
 */
export async function runDetached<H>(
  t: CommandTarget<H>,
  jobs: SandboxJobs<H>,
  spec: CommandSpec,
  finished: string[],
): Promise<ProgramResult> {
  const { provider, handle, fail } = t;
  const timing = jobs.timing;
  const transient = (e: unknown) => provider.isTransient?.(e) ?? false;
  const { signal } = spec;
  if (signal?.aborted) return aborted();
  const deadline = spec.timeoutMs === undefined ? Infinity : Date.now() + spec.timeoutMs;
  const jobId = randomBytes(4).toString("hex");
  const paths = jobPaths(jobId);

  // a job reads its stdin from an uploaded file: a stream is taken whole first
  const stdin = spec.stdin instanceof Uint8Array || spec.stdin === undefined
    ? spec.stdin
    : await readWhole(spec.stdin, signal);
  if (stdin === null) return aborted();

  // launch (never aborted half-way: a job must not start unseen)
  const cleanup = finished.splice(0, 50);
  try {
    if (stdin !== undefined) {
      await putFile(provider, handle, paths.stdin, paths.stdin, stdin);
    }
    const launch = await provider.exec(handle, {
      argv: jobLaunchArgv(jobId, spec.argv, spec.cwd, spec.env, cleanup),
      timeoutS: 30,
    });
    if (launch.exitCode !== 0) {
      throw new Error(
        `the job did not start (exit ${launch.exitCode}): ${decodeText(launch.stderr).trim()}`,
      );
    }
  } catch (e) {
    finished.push(...cleanup);
    throw fail(e);
  }

  // poll the exit file
  let exitCode: number | null = null;
  let stop: "timeout" | "abort" | null = null;
  let delay = timing.pollStartMs;
  let outageSince: number | null = null;
  for (;;) {
    const wait = Math.min(delay, deadline - Date.now());
    if (wait > 0) await sleep(wait, signal).catch(() => {});
    if (signal?.aborted) stop = "abort";
    else if (Date.now() >= deadline) stop = "timeout";
    if (stop) break;
    try {
      exitCode = parseExitFile(await jobs.readText(handle, paths.exit, undefined, signal));
      outageSince = null;
      if (exitCode !== null) break;
      delay = Math.min(delay * 2, timing.pollMaxMs);
    } catch (e) {
      if (signal?.aborted) {
        stop = "abort";
        break;
      }
      if (!transient(e)) throw fail(e);
      outageSince ??= Date.now();
      if (Date.now() - outageSince >= timing.recoveryMs) {
        const s = Math.round(timing.recoveryMs / 1000);
        throw fail(e, `${provider.name} exec failed after a ${s}s gateway outage`);
      }
      delay = Math.min(Math.max(delay * 2, timing.outageBaseMs), timing.outageMaxMs);
    }
  }
  if (stop) {
    try {
      await provider.exec(handle, { argv: killCommand(paths.pgid, paths.exit), timeoutS: 30 });
    } catch (e) {
      t.log(`${provider.name} sandbox ${t.id}: could not kill job ${jobId}: ${errorMessage(e)}`);
    }
  }
  let stdout = "";
  let stderr = "";
  try {
    const window = { offset: -OUTPUT_TAIL_BYTES, length: OUTPUT_TAIL_BYTES };
    [stdout, stderr] = (await Promise.all([
      jobs.readText(handle, paths.stdout, window),
      jobs.readText(handle, paths.stderr, window),
    ])).map((s) => s ?? "") as [string, string];
  } catch (e) {
    if (!stop) throw fail(e);
  }
  finished.push(paths.dir);
  if (stop === "timeout") return { exitCode: TIMEOUT_EXIT_CODE, stdout, stderr };
  if (stop === "abort") return { exitCode: ABORT_EXIT_CODE, stdout, stderr };
  return { exitCode: exitCode ?? 0, stdout, stderr };
}

/** Starts a live program of `provider`; `teardown` kills it. */
export async function spawnUntil<H>(
  provider: SandboxProvider<H>,
  handle: H,
  request: Pick<ExecRequest, "argv" | "cwd" | "env">,
  teardown: AbortSignal,
): Promise<RuntimeProcess> {
  const proc = await provider.spawn!(handle, request);
  const kill = () => void proc.kill();
  if (teardown.aborted) kill();
  teardown.addEventListener("abort", kill, { once: true });
  void proc.exited.then(() => teardown.removeEventListener("abort", kill));
  return proc;
}
