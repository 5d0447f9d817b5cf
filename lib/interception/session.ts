/**
 * One rollout's session on the interception server: its options (trace, model, sampling,
 * upstream, limits, stops), its state (stop condition, last provider error, calls in
 * flight, responses kept for SDK retries) and the limits checked before each call.
 *
 * @module
 */
import { createHash } from "node:crypto";
import {
  ProviderError,
  type TaskError,
  type TraceErrorRecord,
  traceErrorRecord,
} from "../../kit/errors.ts";
import type { Message, ModelCall, Trace } from "../../kit/trace/types.ts";
import type { SessionHooks } from "./hooks.ts";
import { numTurns } from "../../kit/trace/derived.ts";
import type { ProviderClient } from "../clients/provider_client.ts";
import { randomHex } from "../../kit/util/random_pool.ts";
import type { SessionLimits } from "../config/eval_config.ts";
import type { WireReply } from "../../kit/wire/http.ts";

export type { SessionLimits };

/** The parts of a trace the server reads and writes. A full {@link Trace} fits. */
export type SessionTrace =
  & Pick<Trace, "id" | "nodes" | "calls" | "tools" | "stop_condition">
  & Partial<Pick<Trace, "request_rewrites" | "response_rewrites">>;

/** How one rollout's calls are handled. */
export interface SessionOptions {
  /** Grown live: nodes, calls, tools and stop_condition. */
  trace: SessionTrace;
  /** Always replaces the program's model. */
  model: string;
  /** Non-null keys overlay the program's body (extras included). */
  sampling: Record<string, unknown>;
  /** The upstream provider. */
  client: ProviderClient;
  /** Checked before each model call; a null or absent limit is no limit. */
  limits: Partial<SessionLimits>;
  /** Checked before each call (after the limits); a name stops the rollout under it. */
  stops?: () => Promise<string | null>;
  /** Names a call the program makes on its own (not a turn), else null. @default none */
  auxiliary?: (request: { path: string; body: unknown }) => string | null;
  /** The task's interception hooks (lib/interception/hooks.ts), in the order they run. */
  hooks?: SessionHooks;
}

/** One rollout's handle on the server. */
export interface InterceptionSession {
  /** The bearer token the program must send. */
  readonly secret: string;
  /** Base URL for the program's OpenAI client (`<server url>/v1`). */
  readonly endpoint: string;
  /** The condition that stopped this session, if any. */
  readonly stopCondition: string | null;
  /** The last provider error of this session, if any. */
  readonly providerError: ProviderError | null;
  /** Sum of the durations of this session's model calls, in seconds. */
  readonly modelSeconds: number;
  /** The failure of an interception hook (a `TaskError`), which fails the rollout. */
  readonly hookError: TaskError | null;
  /** Ends the session: later requests get 409; in-flight calls are aborted and recorded. */
  close(): void;
}

/** A response kept for replaying an SDK retry. */
export interface Recorded {
  status: number;
  headers: Record<string, string>;
  /**
   * The JSON body, or the chunks of SSE events as they were written to the program (kept as
   * they went, written again in order: a stream is never joined unless it is replayed).
   */
  body: string | Uint8Array | readonly (string | Uint8Array)[];
}

/** Request bodies up to this many characters are their own replay key; longer ones are hashed. */
const MAX_PLAIN_REPLAY_KEY = 4096;

/** The key an SDK retry of a request (its text and bytes) finds its recorded answer under. */
export function replayKeyOf(text: string, raw: Uint8Array): string {
  return text.length <= MAX_PLAIN_REPLAY_KEY
    ? `=${text}`
    : `#${createHash("sha256").update(raw).digest("hex")}`;
}

/** Sends a recorded response again, as it went the first time. */
export function writeRecorded(reply: WireReply, recorded: Recorded): void {
  reply.head(recorded.status, recorded.headers);
  const { body } = recorded;
  if (typeof body === "string" || body instanceof Uint8Array) return reply.end(body);
  for (const chunk of body) reply.write(chunk);
  reply.end();
}

/** A call being made: recorded once, when it ends or its session closes. */
export interface InFlight {
  call: ModelCall;
  recorded: boolean;
}

/** A call cut off because its rollout ended: Python records the cancellation's type. */
export const closedError = (): TraceErrorRecord =>
  traceErrorRecord("CancelledError", "rollout session closed");

/** Seconds since the epoch, with sub-millisecond precision. */
export function now(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

/** A session's state, as the server's handlers see it. */
export class Session implements InterceptionSession {
  readonly secret: string;
  readonly endpoint: string;
  readonly options: SessionOptions;
  stopCondition: string | null = null;
  providerError: ProviderError | null = null;
  hookError: TaskError | null = null;
  /** Tool results the hooks saw on their way to the agent, by call id (see hooks.ts). */
  readonly prepared = new Map<string, Message>();
  modelSeconds = 0;
  closed = false;
  readonly abort = new AbortController();
  readonly replays = new Map<string, Promise<Recorded | null>>();
  readonly inFlight = new Set<InFlight>();
  readonly #onClose: (s: Session) => void;

  constructor(endpoint: string, options: SessionOptions, onClose: (s: Session) => void) {
    this.secret = randomHex(24);
    this.endpoint = endpoint;
    this.options = options;
    this.#onClose = onClose;
  }

  /** Records the condition that stops this session; the trace keeps the first one. */
  stop(condition: string): void {
    this.stopCondition ??= condition;
    this.options.trace.stop_condition ??= condition;
  }

  /** Records the names of hooks that rewrote a request or a response. */
  recordRewrites(kind: "request" | "response", names: string[]): void {
    const list = kind === "request"
      ? (this.options.trace.request_rewrites ??= [])
      : (this.options.trace.response_rewrites ??= []);
    for (const handler of names) list.push({ handler });
  }

  /** Appends a call to the trace once (with its end time) and counts its duration. */
  finish(entry: InFlight, error?: TraceErrorRecord): void {
    this.inFlight.delete(entry);
    if (entry.recorded) return;
    entry.recorded = true;
    const call = entry.call;
    if (error !== undefined && call.error === null) call.error = error;
    call.time.end = now();
    this.modelSeconds += Math.max(0, call.time.end - call.time.start);
    this.options.trace.calls.push(call);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    // Upstream requests exist only while their call is in flight; with none, skip the
    // abort (a DOMException per rollout is a measurable cost on the hot path).
    const busy = this.inFlight.size > 0;
    for (const entry of [...this.inFlight]) this.finish(entry, closedError());
    if (busy) this.abort.abort(new DOMException("rollout session closed", "AbortError"));
    this.replays.clear();
    this.#onClose(this);
  }
}

function tokensSoFar(trace: SessionTrace): { input: number; output: number } {
  let input = 0;
  let output = 0;
  for (const call of trace.calls) {
    if (!call.usage) continue;
    input += call.usage.prompt_tokens + (call.usage.cached_input_tokens ?? 0);
    output += call.usage.completion_tokens;
  }
  return { input, output };
}

/** The first limit reached before a new call, or null. */
export function limitReached(
  trace: SessionTrace,
  limits: Partial<SessionLimits>,
): string | null {
  const reached = (limit: number | null | undefined, value: number) =>
    typeof limit === "number" && value >= limit;
  if (reached(limits.max_turns, numTurns(trace))) return "max_turns";
  const { input, output } = tokensSoFar(trace);
  if (reached(limits.max_input_tokens, input)) return "max_input_tokens";
  if (reached(limits.max_output_tokens, output)) return "max_output_tokens";
  if (reached(limits.max_total_tokens, input + output)) return "max_total_tokens";
  return null;
}
