/**
 * Drives one ACP (Agent Client Protocol) session over a program's stdio with
 * `@agentclientprotocol/sdk`: `initialize`, `session/new` with the rollout's working
 * directory (and MCP servers), one `session/prompt`, answering `session/request_permission`
 * as configured and folding every `session/update` into an {@link AcpRecord}. Nothing here
 * can hang: the start (initialize and session/new) has its own timeout, the prompt ends
 * with the adapter's exit or the rollout's signal (then `session/cancel`, a short grace,
 * and the process group killed), and every failure of the adapter is a `HarnessError`
 * carrying its last stderr lines.
 *
 * @module
 */
import {
  client as acpClient,
  type McpServer,
  ndJsonStream,
  PROTOCOL_VERSION,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
} from "@agentclientprotocol/sdk";
import { errorMessage, HarnessError } from "../../errors.ts";
import type { ProcessExit, ProgramResult, RuntimeProcess } from "../../runtime/runtime.ts";
import { redact } from "../../secrets.ts";
import { AcpCollector, type AcpRecord } from "./record.ts";

/** How permission requests are answered. */
export type PermissionPolicy = "allow" | "reject";

/** Options of {@link runAcpSession}. */
export interface AcpSessionOptions {
  /** The session's working directory (absolute, inside the runtime). */
  cwd: string;
  /** The prompt text. */
  prompt: string;
  /** MCP servers for `session/new`. @default none */
  mcpServers?: McpServer[];
  /** More fields of `session/new` (an agent's `_meta`, `systemPrompt`). @default none */
  sessionParams?: Record<string, unknown>;
  /** A session mode to set after `session/new` (`session/set_mode`). @default none */
  modeId?: string;
  /** How to answer `session/request_permission`. @default "allow" */
  permissions?: PermissionPolicy;
  /** Time for `initialize` and `session/new` together, in ms. */
  startTimeoutMs: number;
  /** Time the agent gets to end its turn after `session/cancel`, in ms. @default 2000 */
  cancelGraceMs?: number;
  /** Aborted at the rollout's deadline or when the run is cancelled. */
  signal: AbortSignal;
  /** Where the session is recorded (filled as updates arrive). */
  record: AcpRecord;
  /** The adapter's name for messages. */
  name: string;
}

/** Stderr lines quoted in an error. */
const ERROR_STDERR_LINES = 12;

/** Why a step stopped waiting. */
type Interrupt =
  | { why: "exit"; exit: ProcessExit }
  | { why: "timeout" }
  | { why: "abort" }
  | { why: "refused"; title: string };

/**
 * Runs one prompt turn of the adapter `proc` and kills it afterwards. Resolves with a
 * result whose `exitCode` is 0 when the turn ended (stdout: the agent's reply) and non-zero
 * when the prompt failed or the adapter exited during it (stderr: why, and the adapter's
 * last stderr lines), so a stop condition of the run can explain it. Throws a
 * `HarnessError` when the session never started or a permission was refused.
 */
export async function runAcpSession(
  proc: RuntimeProcess,
  options: AcpSessionOptions,
): Promise<ProgramResult> {
  const collector = new AcpCollector(options.record);
  const policy = options.permissions ?? "allow";
  let interrupt: ((i: Interrupt) => void) | null = null;
  const interrupted = new Promise<Interrupt>((resolve) => (interrupt = resolve));
  const stop = (i: Interrupt) => interrupt?.(i);

  void proc.exited.then((exit) => stop({ why: "exit", exit }));
  const onAbort = () => stop({ why: "abort" });
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener("abort", onAbort, { once: true });

  const answerPermission = (params: RequestPermissionRequest): RequestPermissionResponse => {
    const title = params.toolCall.title ?? null;
    const wanted = policy === "allow" ? ["allow_once", "allow_always"] : ["reject_once"];
    const option = wanted.map((k) => params.options.find((o) => o.kind === k)).find((o) => o);
    options.record.permissions.push({
      tool_call: params.toolCall.toolCallId,
      title,
      outcome: option ? "selected" : "cancelled",
      option: option?.optionId ?? null,
      kind: option?.kind ?? null,
    });
    if (policy === "reject") stop({ why: "refused", title: title ?? params.toolCall.toolCallId });
    return option
      ? { outcome: { outcome: "selected", optionId: option.optionId } }
      : { outcome: { outcome: "cancelled" } };
  };

  const connection = acpClient({ name: "verifiers-ts" })
    .onRequest("session/request_permission", ({ params }) => answerPermission(params))
    .onNotification("session/update", ({ params }) => collector.add(params.update))
    .connect(ndJsonStream(proc.stdin, proc.stdout));
  void connection.closed.catch(() => {});

  const fail = (what: string, cause?: unknown): HarnessError =>
    new HarnessError(redact(`${options.name}: ${what}${stderrNote(proc)}`), { cause });

  try {
    // the start: initialize and session/new within the start timeout
    let timer: ReturnType<typeof setTimeout> | undefined;
    const started = new Promise<Interrupt>((resolve) => {
      timer = setTimeout(() => resolve({ why: "timeout" }), options.startTimeoutMs);
    });
    const step = <T>(label: string, request: Promise<T>): Promise<T> =>
      settle(label, request, Promise.race([interrupted, started]));
    const settle = async <T>(label: string, request: Promise<T>, until: Promise<Interrupt>) => {
      request.catch(() => {});
      const first = await Promise.race([
        request.then((value) => ({ value }), (error: unknown) => ({ error })),
        until.then((i) => ({ interrupt: i })),
      ]);
      if ("value" in first) return first.value;
      if ("error" in first) {
        // a closed connection usually means the adapter exited: say so when it did
        const exit = await exitSoon(proc);
        if (exit !== null) throw fail(describe(label, { why: "exit", exit }, 0));
        throw fail(`ACP ${label} failed: ${errorMessage(first.error)}`, first.error);
      }
      throw fail(describe(label, first.interrupt, options.startTimeoutMs));
    };
    try {
      const init = await step(
        "initialize",
        connection.agent.request("initialize", {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } },
          clientInfo: { name: "verifiers-ts", version: "1" },
        }),
      );
      options.record.agent = {
        name: init.agentInfo?.name ?? null,
        version: init.agentInfo?.version ?? null,
      };
      const session = await step(
        "session/new",
        connection.agent.request("session/new", {
          ...options.sessionParams,
          cwd: options.cwd,
          mcpServers: options.mcpServers ?? [],
        }),
      );
      options.record.session_id = session.sessionId;
      if (options.modeId !== undefined) {
        await step(
          "session/set_mode",
          connection.agent.request("session/set_mode", {
            sessionId: session.sessionId,
            modeId: options.modeId,
          }),
        );
      }
      clearTimeout(timer);

      // the prompt: until the turn ends, the adapter exits, or the rollout is cut short
      const prompt = connection.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: options.prompt }],
      });
      prompt.catch(() => {});
      const first = await Promise.race([
        prompt.then((value) => ({ value }), (error: unknown) => ({ error })),
        interrupted.then((i) => ({ interrupt: i })),
      ]);
      if ("value" in first) {
        const record = options.record;
        record.stop_reason = first.value.stopReason;
        if (record.text.trim() === "" && record.tool_calls.length === 0) {
          // an adapter that hides a failed model call ends the turn with nothing (pi-acp)
          return {
            exitCode: 1,
            stdout: "",
            stderr: redact(
              [
                `the agent ended its turn (${record.stop_reason}) without a reply or a tool call`,
                ...proc.stderrTail(),
              ].join("\n"),
            ),
          };
        }
        return { exitCode: 0, stdout: record.text, stderr: redact(proc.stderrTail().join("\n")) };
      }
      if ("interrupt" in first && first.interrupt.why !== "exit") {
        // cut short: ask the agent to stop, give it a moment, then the group is killed
        await connection.agent.notify("session/cancel", { sessionId: session.sessionId })
          .catch(() => {});
        const grace = options.cancelGraceMs ?? 2000;
        const ended = await Promise.race([
          prompt.then((r) => r.stopReason, () => null),
          new Promise<null>((r) => setTimeout(() => r(null), grace)),
        ]);
        options.record.stop_reason = ended ?? "cancelled";
        if (first.interrupt.why === "refused") {
          throw fail(
            `permission refused for tool call "${first.interrupt.title}" (permissions = "reject")`,
          );
        }
        throw fail("ACP session/prompt cancelled: the rollout was stopped");
      }
      const exit = "interrupt" in first && first.interrupt.why === "exit"
        ? first.interrupt.exit
        : await exitSoon(proc);
      const why = exit !== null
        ? describe("session/prompt", { why: "exit", exit }, 0)
        : `ACP session/prompt failed: ${errorMessage("error" in first ? first.error : null)}`;
      const exitCode = exit !== null ? exit.exitCode || 1 : 1;
      return {
        exitCode,
        stdout: options.record.text,
        stderr: redact([why, ...proc.stderrTail()].join("\n")),
      };
    } finally {
      clearTimeout(timer);
    }
  } finally {
    options.signal.removeEventListener("abort", onAbort);
    connection.close();
    await proc.kill();
  }
}

/** How long a failed request waits to learn whether the adapter exited, in ms. */
const EXIT_WAIT_MS = 300;

/** The adapter's exit when it comes within {@link EXIT_WAIT_MS}, else null. */
function exitSoon(proc: RuntimeProcess): Promise<ProcessExit | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    proc.exited,
    new Promise<null>((r) => (timer = setTimeout(() => r(null), EXIT_WAIT_MS))),
  ]).finally(() => clearTimeout(timer));
}

/** The message for an interrupted step. */
function describe(label: string, i: Interrupt, timeoutMs: number): string {
  switch (i.why) {
    case "timeout":
      return `ACP ${label} got no answer within ${timeoutMs / 1000}s (start_timeout)`;
    case "abort":
      return `ACP ${label} cancelled: the rollout was stopped`;
    case "refused":
      return `permission refused for tool call "${i.title}" (permissions = "reject")`;
    case "exit":
      return i.exit.startError !== null
        ? `the adapter could not start: ${i.exit.startError}`
        : `the adapter exited with code ${i.exit.exitCode} during ${label}`;
  }
}

/** The adapter's last stderr lines, as a note to append to a message. */
function stderrNote(proc: RuntimeProcess): string {
  const lines = proc.stderrTail().filter((l) => l.trim() !== "").slice(-ERROR_STDERR_LINES);
  return lines.length === 0 ? "" : `; its last stderr lines:\n${lines.join("\n")}`;
}
