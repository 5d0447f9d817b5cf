/**
 * Commands in a sandbox: `POST …/exec` on containers, the Connect command session on VMs
 * (`command_session.CommandSession/Start`), and signals to a command-session process.
 * Timeouts become {@link PrimeCommandTimeoutError} (or not running, when the sandbox is
 * gone), as in the SDK (sandbox.py and rpc_command_session.py@66fb4b70).
 *
 * @module
 */
import { anySignal, concatBytes } from "../../../kit/mod.ts";
import { type ClientContext, USER_AGENT } from "./client_context.ts";
import {
  type CommandSessionEvent,
  decodeStartResponse,
  encodeSendSignalRequest,
  encodeStartRequest,
} from "./command_session_pb.ts";
import { connectServerStream, connectUnary } from "./connect.ts";
import type { PrimeControlPlane } from "./control_plane.ts";
import {
  PrimeApiError,
  PrimeCommandTimeoutError,
  PrimeConnectError,
  TERMINAL_STATUSES,
} from "./errors.ts";
import { errInit, goneError, notRunning } from "./failures.ts";
import type { GatewayAuth } from "./gateway_auth.ts";
import type { PrimeGateway } from "./gateway.ts";
import { bodyJson } from "./http.ts";
import { type ExecOptions, type ExecResult, fieldsOf, num, str } from "./records.ts";

type EndEvent = Extract<CommandSessionEvent, { kind: "end" }>;

/** True for a Connect `unauthenticated`: the gateway refused the token. */
function isUnauthenticated(e: unknown): boolean {
  return e instanceof PrimeConnectError && e.connectCode === "unauthenticated";
}

/** The command calls of one client. */
export class PrimeCommands {
  readonly #ctx: ClientContext;
  readonly #control: PrimeControlPlane;
  readonly #auth: GatewayAuth;
  readonly #gateway: PrimeGateway;

  constructor(
    ctx: ClientContext,
    control: PrimeControlPlane,
    auth: GatewayAuth,
    gateway: PrimeGateway,
  ) {
    this.#ctx = ctx;
    this.#control = control;
    this.#auth = auth;
    this.#gateway = gateway;
  }

  /**
   * Runs a shell command and waits for it: `POST …/exec` on containers, the Connect
   * command session on VMs. Maps 409 (retried while the sandbox is RUNNING), 408 and
   * timeouts (command timeout, or not running when the sandbox is gone), and the gateway's
   * `sandbox_not_found` (not running, with the reason from `/error-context`).
   */
  async exec(id: string, command: string, options: ExecOptions = {}): Promise<ExecResult> {
    const vm = await this.#control.isVm(id);
    return vm
      ? await this.#execVm(id, command, options)
      : await this.#execContainer(id, command, options);
  }

  async #execContainer(id: string, command: string, o: ExecOptions): Promise<ExecResult> {
    const timeoutS = o.timeoutS ?? 300;
    const payload = JSON.stringify({
      command,
      working_dir: o.cwd ?? null,
      env: o.env ?? {},
      sandbox_id: id,
      timeout: Math.max(1, Math.ceil(timeoutS)),
    });
    try {
      const res = await this.#gateway.request(id, {
        kind: "post",
        method: "POST",
        sub: "exec",
        body: () => payload,
        headers: { "Content-Type": "application/json" },
        // the + 5 s of the SDK: a command close to its timeout is not cut off by the client
        timeoutMs: (timeoutS + 5) * 1000,
        signal: o.signal,
      });
      const j = fieldsOf(bodyJson(res));
      return {
        stdout: str(j.stdout) ?? "",
        stderr: str(j.stderr) ?? "",
        exitCode: num(j.exit_code) ?? 0,
      };
    } catch (e) {
      if (o.signal?.aborted || !(e instanceof PrimeApiError)) throw e;
      if (e.httpStatus === 408 || e.transport === "timeout") {
        throw await this.#timeoutError(id, e, timeoutS);
      }
      throw e;
    }
  }

  async #timeoutError(id: string, e: PrimeApiError, timeoutS: number): Promise<PrimeApiError> {
    const ctx = await this.#control.contextOrEmpty(id);
    if (ctx.status !== null && TERMINAL_STATUSES.has(ctx.status)) return notRunning(id, ctx, e);
    return new PrimeCommandTimeoutError(`Command timed out after ${timeoutS}s in sandbox ${id}`, {
      ...errInit(e),
      cause: e,
    });
  }

  async #execVm(id: string, command: string, o: ExecOptions): Promise<ExecResult> {
    const timeoutS = o.timeoutS ?? 300;
    const request = encodeStartRequest({
      command: {
        cmd: "/bin/bash",
        args: ["-c", command],
        envs: o.env ?? {},
        ...(o.cwd ? { cwd: o.cwd } : {}),
      },
      // `optional bool`: absent is not false; the SDK always sends it
      // (build_command_session_start_request, rpc_command_session.py@66fb4b70)
      stdin: false,
    });
    const sig = anySignal([this.#ctx.life, o.signal]);
    // events of the current session: a refusal after the first one is not a re-login case
    let events = 0;
    const session = await this.#auth.withAuth(id, async (a) => {
      const stdout: Uint8Array[] = [];
      const stderr: Uint8Array[] = [];
      let end: EndEvent | null = null;
      events = 0;
      try {
        for await (
          const msg of connectServerStream({
            fetch: this.#ctx.fetch,
            url: `${a.gatewayUrl}/${a.userNs}/${a.jobId}/command_session.CommandSession/Start`,
            token: a.token,
            request,
            timeoutMs: timeoutS * 1000,
            signal: sig,
            userAgent: USER_AGENT,
          })
        ) {
          events++;
          const ev = decodeStartResponse(msg);
          if (!ev) continue;
          if (ev.kind === "data") (ev.stream === "stderr" ? stderr : stdout).push(ev.bytes);
          else if (ev.kind === "end") end = ev;
        }
      } catch (e) {
        if (o.signal?.aborted || (isUnauthenticated(e) && events === 0)) throw e;
        if (e instanceof PrimeConnectError) {
          if (e.connectCode === "not_found") {
            throw goneError(id, await this.#control.contextOrEmpty(id), e);
          }
          if (e.connectCode === "deadline_exceeded") {
            throw await this.#timeoutError(id, e, timeoutS);
          }
        }
        if (e instanceof PrimeApiError && e.transport === "timeout") {
          throw await this.#timeoutError(id, e, timeoutS);
        }
        throw e;
      }
      return { stdout, stderr, end };
    }, (e) => !o.signal?.aborted && isUnauthenticated(e) && events === 0);
    if (!session.end) {
      throw new PrimeApiError(
        `Request failed: the command session of sandbox ${id} ended without an end event`,
        {
          transport: "network",
          phase: "read",
          method: "POST",
          path: "command_session.CommandSession/Start",
        },
      );
    }
    // an `error` on the end event is ignored, as by the SDK: the exit code is the answer
    // (collect_command_session_start_event, rpc_command_session.py@66fb4b70)
    return {
      stdout: decodeAll(session.stdout),
      stderr: decodeAll(session.stderr),
      exitCode: session.end.exitCode,
    };
  }

  /**
   * Sends a signal to a command-session process (VM sandboxes), re-authenticating once on
   * `unauthenticated` and never retried otherwise (`_execute_process_control_rpc`).
   *
   * There is deliberately no counterpart of the SDK's `open_process` (a live process with
   * stdin writes and signals): the runtime contract (kit/runtime/runtime.ts) runs a program
   * to its end with its whole stdin given up front, which runtime.ts does the same way on
   * containers and VMs (an uploaded stdin file and a background job), so nothing here
   * would call it.
   */
  async sendSignal(id: string, pid: number, signal: number): Promise<void> {
    await this.#auth.withAuth(id, async (a) => {
      await connectUnary({
        fetch: this.#ctx.fetch,
        url: `${a.gatewayUrl}/${a.userNs}/${a.jobId}/command_session.CommandSession/SendSignal`,
        token: a.token,
        request: encodeSendSignalRequest({ session: { pid }, signal }),
        timeoutMs: 10_000,
        signal: this.#ctx.life,
        userAgent: USER_AGENT,
      });
    }, isUnauthenticated);
  }
}

function decodeAll(chunks: Uint8Array[]): string {
  return new TextDecoder().decode(concatBytes(chunks));
}
