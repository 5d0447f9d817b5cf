/**
 * The task command router client (`modal.task_command_router.TaskCommandRouter`): exec
 * start, stdin writes, resumable stdout/stderr reads and exit waits for one task, at the
 * per-task URL that `TaskGetCommandRouterAccess` hands out, authenticated by its JWT
 * (`authorization: Bearer`). Retry rules are the official SDK's (`modal@0.7.2`):
 * transient codes are retried from 10 ms doubling (10 times); an UNAUTHENTICATED call
 * refreshes the JWT once (unless it has more than 30 s left) and is retried; `TaskExecWait`
 * runs in 60 s calls retried every second; a broken output stream resumes at its byte offset.
 *
 * @module
 */
import { SandboxError, sleep, VERSION } from "../../../kit/mod.ts";
import { isTransientGrpc, jwtExpiry } from "./api.ts";
import type { ModalApi } from "./api.ts";
import { GrpcChannel, GrpcError, Status } from "./grpc.ts";
import * as M from "./messages.ts";
import type { MessageType } from "../../../kit/mod.ts";
import { isLocalServer } from "./profile.ts";

/** `SandboxGetTaskId` polling: interval and attempts (the SDK's: 5 minutes). */
const TASK_ID_POLL_MS = 500;
const TASK_ID_POLL_ATTEMPTS = 600;
/** Per-call deadline of `TaskExecWait` (the SDK's). */
const EXEC_WAIT_CALL_MS = 60_000;

/** The result of `TaskExecWait`: an exit code, or the signal that killed the command. */
export interface ExecExit {
  code: number | undefined;
  signal: number | undefined;
}

/** Thrown when an overall deadline passes while waiting on the router. */
class RouterDeadlineError extends Error {
  constructor(what: string) {
    super(`Deadline exceeded while ${what}`);
    this.name = "RouterDeadlineError";
  }
}

/** A router session for one task. */
export class TaskRouter {
  readonly taskId: string;
  readonly url: string;
  readonly #api: ModalApi;
  readonly #channel: GrpcChannel;
  #jwt: string;
  #jwtExp: number;
  #refresh: Promise<void> = Promise.resolve();
  #closed = false;

  private constructor(api: ModalApi, taskId: string, url: string, jwt: string) {
    this.#api = api;
    this.taskId = taskId;
    this.url = url;
    this.#jwt = jwt;
    this.#jwtExp = jwtExpiry(jwt);
    const u = new URL(url);
    // As the official SDK: a local control plane means a plaintext (h2c) router too.
    this.#channel = new GrpcChannel(`https://${u.hostname}:${u.port || "443"}`, {
      plaintext: isLocalServer(api.profile.serverUrl),
      userAgent: `verifiers-ts/${VERSION}`,
    });
  }

  /** Gets router access for `taskId` and connects to it. */
  static async open(api: ModalApi, taskId: string, signal?: AbortSignal): Promise<TaskRouter> {
    let access: M.TaskGetCommandRouterAccessResponse;
    try {
      access = await api.taskGetCommandRouterAccess(taskId, signal);
    } catch (e) {
      if (e instanceof GrpcError && e.code === Status.FAILED_PRECONDITION) {
        throw new SandboxError("Command router access is not available for this sandbox", {
          hint: "The Modal task has no command router; this runtime needs one",
          cause: e,
        });
      }
      throw e;
    }
    let url: URL;
    try {
      url = new URL(access.url);
    } catch (e) {
      throw new SandboxError(`modal task router URL is invalid: "${access.url}"`, { cause: e });
    }
    if (url.protocol !== "https:") {
      throw new SandboxError(`Task router URL must be https, got: ${access.url}`, {
        hint: "The server handed out a router URL the official SDK would refuse",
      });
    }
    return new TaskRouter(api, taskId, access.url, access.jwt);
  }

  /** Closes the router connection; later calls fail. */
  close(): void {
    this.#closed = true;
    this.#channel.close();
  }

  get closed(): boolean {
    return this.#closed;
  }

  async #refreshJwt(): Promise<void> {
    let error: unknown = null;
    this.#refresh = this.#refresh.then(async () => {
      if (this.#closed) return;
      if (this.#jwtExp !== 0 && this.#jwtExp - Date.now() / 1000 > 30) return;
      try {
        const access = await this.#api.taskGetCommandRouterAccess(this.taskId);
        if (access.url !== this.url) throw new Error("Task router URL changed during session");
        this.#jwt = access.jwt;
        this.#jwtExp = jwtExpiry(access.jwt);
      } catch (e) {
        error = e;
      }
    });
    await this.#refresh;
    if (error !== null) throw error;
  }

  #meta(): Record<string, string> {
    return { authorization: `Bearer ${this.#jwt}` };
  }

  async #unaryOnce<Req extends object, Res extends object>(
    method: string,
    reqType: MessageType<Req>,
    resType: MessageType<Res>,
    request: Partial<Req>,
    options: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined },
  ): Promise<Res> {
    const call = () =>
      this.#channel.unary(M.ROUTER_SERVICE + method, reqType.encode(request), {
        metadata: this.#meta(),
        timeoutMs: options.timeoutMs,
        signal: options.signal,
      });
    try {
      return resType.decode(await call());
    } catch (e) {
      if (e instanceof GrpcError && e.code === Status.UNAUTHENTICATED) {
        await this.#refreshJwt();
        return resType.decode(await call());
      }
      throw e;
    }
  }

  async #withRetries<T>(
    fn: () => Promise<T>,
    opts: {
      baseDelayMs: number;
      factor: number;
      maxRetries: number | null;
      deadline: number | null;
      signal?: AbortSignal | undefined;
      what: string;
    },
  ): Promise<T> {
    let delay = opts.baseDelayMs;
    for (let n = 0;; n++) {
      if (opts.deadline !== null && Date.now() >= opts.deadline) {
        throw new RouterDeadlineError(opts.what);
      }
      try {
        return await fn();
      } catch (e) {
        const retry = isTransientGrpc(e) && !opts.signal?.aborted && !this.#closed &&
          (opts.maxRetries === null || n < opts.maxRetries);
        if (!retry) throw e;
        if (opts.deadline !== null && Date.now() + delay >= opts.deadline) {
          throw new RouterDeadlineError(opts.what);
        }
        await sleep(delay, opts.signal);
        delay *= opts.factor;
      }
    }
  }

  /** `TaskExecStart` (idempotent by `execId`, so retried). */
  async execStart(request: Partial<M.TaskExecStartRequest>, signal?: AbortSignal): Promise<void> {
    await this.#withRetries(
      () =>
        this.#unaryOnce(
          "TaskExecStart",
          M.TaskExecStartRequest,
          M.TaskExecStartResponse,
          request,
          { signal },
        ),
      { baseDelayMs: 10, factor: 2, maxRetries: 10, deadline: null, signal, what: "starting exec" },
    );
  }

  /** `TaskExecStdinWrite` at `offset` (offset-addressed, so retried). */
  async stdinWrite(
    execId: string,
    offset: number,
    data: Uint8Array,
    eof: boolean,
    signal?: AbortSignal,
  ): Promise<void> {
    await this.#withRetries(
      () =>
        this.#unaryOnce(
          "TaskExecStdinWrite",
          M.TaskExecStdinWriteRequest,
          M.TaskExecStdinWriteResponse,
          {
            taskId: this.taskId,
            execId,
            offset,
            data,
            eof,
          },
          { signal },
        ),
      {
        baseDelayMs: 10,
        factor: 2,
        maxRetries: 10,
        deadline: null,
        signal,
        what: `writing stdin of exec ${execId}`,
      },
    );
  }

  /**
   * Reads one output stream of an exec to its end, resuming at the current byte offset after
   * a transient failure (10 retries from 10 ms, doubling; the delay resets when data arrives)
   * and refreshing the JWT once on UNAUTHENTICATED.
   */
  async *stdioRead(
    execId: string,
    fd: number,
    options: { deadline?: number | null; signal?: AbortSignal | undefined } = {},
  ): AsyncGenerator<Uint8Array> {
    const deadline = options.deadline ?? null;
    let offset = 0;
    let delay = 10;
    let retriesLeft = 10;
    let didAuthRetry = false;
    for (;;) {
      try {
        const timeoutMs = deadline !== null ? Math.max(0, deadline - Date.now()) : undefined;
        const stream = this.#channel.serverStream(
          M.ROUTER_SERVICE + "TaskExecStdioRead",
          M.TaskExecStdioReadRequest.encode({
            taskId: this.taskId,
            execId,
            offset,
            fileDescriptor: fd,
          }),
          { metadata: this.#meta(), timeoutMs, signal: options.signal },
        );
        try {
          for await (const bytes of stream) {
            const item = M.TaskExecStdioReadResponse.decode(bytes);
            didAuthRetry = false;
            delay = 10;
            offset += item.data.byteLength;
            yield item.data;
          }
          return;
        } catch (e) {
          if (e instanceof GrpcError && e.code === Status.UNAUTHENTICATED && !didAuthRetry) {
            await this.#refreshJwt();
            didAuthRetry = true;
            continue;
          }
          throw e;
        }
      } catch (e) {
        if (isTransientGrpc(e) && retriesLeft > 0 && !options.signal?.aborted && !this.#closed) {
          if (deadline !== null && deadline - Date.now() <= delay) {
            throw new RouterDeadlineError(`streaming output of exec ${execId}`);
          }
          await sleep(delay, options.signal);
          delay *= 2;
          retriesLeft--;
          continue;
        }
        throw e;
      }
    }
  }

  /**
   * `TaskExecWait` until the command exits: 60 s calls, retried every second on transient
   * codes (DEADLINE_EXCEEDED included) until the overall `deadline`, if any.
   */
  async execWait(
    execId: string,
    options: { deadline?: number | null; signal?: AbortSignal | undefined } = {},
  ): Promise<ExecExit> {
    const deadline = options.deadline ?? null;
    return await this.#withRetries(
      () =>
        this.#unaryOnce(
          "TaskExecWait",
          M.TaskExecWaitRequest,
          M.TaskExecWaitResponse,
          { taskId: this.taskId, execId },
          { timeoutMs: EXEC_WAIT_CALL_MS, signal: options.signal },
        ),
      {
        baseDelayMs: 1000,
        factor: 1,
        maxRetries: null,
        deadline,
        signal: options.signal,
        what: `waiting for exec ${execId}`,
      },
    );
  }
}

/**
 * The task id of a created sandbox, polled with `SandboxGetTaskId` until Modal scheduled it
 * (every 500 ms, for 5 minutes, as the SDK); a sandbox that already finished is an error.
 */
export async function waitForTask(
  api: ModalApi,
  sandboxId: string,
  signal?: AbortSignal,
): Promise<string> {
  for (let i = 0; i < TASK_ID_POLL_ATTEMPTS; i++) {
    const res = await api.sandboxGetTaskId(sandboxId, signal);
    if (res.taskResult) {
      const r = res.taskResult;
      throw new SandboxError(
        `Sandbox ${sandboxId} has already completed${
          r.exception ? ` with result: exception: "${r.exception}"` : ""
        }`,
        { hint: "The sandbox ended before it ran anything; check the image and its lifetime" },
      );
    }
    if (res.taskId) return res.taskId;
    await sleep(TASK_ID_POLL_MS, signal);
  }
  throw new SandboxError(`Timed out waiting for the task of sandbox ${sandboxId}`, {
    hint: "Modal did not schedule the sandbox within 5 minutes",
  });
}
