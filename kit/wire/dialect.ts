/**
 * What a model API dialect provides to the interception server: the routes it serves,
 * how it reads a program's request and the provider's answer (JSON or a stream of
 * server-sent events), how it renders an answer of its own, and its error bodies. The
 * server owns everything else — sessions, limits, stops, replays of SDK retries, the
 * upstream call and the trace — so a second dialect is one module implementing this.
 *
 * @module
 */
import type { Message, ToolSpec, Usage } from "../trace/types.ts";
import type { SseEvent } from "./sse.ts";

/** What one model call produced, in the trace's terms. */
export interface DialectOutcome {
  /** The model's reply. */
  message: Message;
  /** The provider's finish reason as sent (the trace normalises it). */
  finishReason: string | null;
  /** Token usage; null when the provider reported none. */
  usage: Usage | null;
}

/** A program's request as the dialect reads it. */
export interface DialectRequest {
  /** The body as the program sent it (unknown fields kept). */
  body: Record<string, unknown>;
  /** The conversation, as trace messages. */
  messages: Message[];
  /** True when the program asked for a stream of server-sent events. */
  stream: boolean;
}

/** The body sent upstream for one call, and what the trace records about it. */
export interface UpstreamCall {
  /** The body to send: the run's model and sampling applied. */
  body: Record<string, unknown>;
  /** True when the body asks for a stream of server-sent events. */
  stream: boolean;
  /** The settings recorded in `ModelCall.sampling`. */
  sampling: Record<string, unknown>;
  /** The tools offered, recorded on `trace.tools`; null when the request offers none. */
  tools: ToolSpec[] | null;
  /** For a stream: relay usage-only events, which the program asked for itself. */
  relayUsage: boolean;
}

/** What a stream reader makes of one event. */
export type StreamVerdict =
  /** Pass the event on to the program. */
  | { kind: "relay" }
  /** Keep the event from the program (e.g. usage it did not ask for). */
  | { kind: "hide" }
  /** The stream's last event: relayed after the answer is recorded. */
  | { kind: "terminal" }
  /** The event reports a provider error: relayed, and the call fails at the end. */
  | { kind: "error"; message: string }
  /** The event cannot be read: the stream is broken (`data` is the event's data). */
  | { kind: "malformed"; data: string };

/** Reads one streamed answer event by event, in bounded work per event. */
export interface DialectStreamReader {
  /** Reads one event and says what to do with it. */
  read(event: SseEvent): StreamVerdict;
  /** True once the events carried an answer (a stream without one is broken). */
  readonly answered: boolean;
  /** The answer reassembled so far. */
  result(): DialectOutcome;
}

/** A fixed answer of the server (status and JSON body). */
export interface DialectAnswer {
  status: number;
  body: unknown;
  /** The error `code` when the answer is an error (for logs). */
  code?: string;
}

/** A route a dialect serves, relative to the server's root. */
export interface DialectRoute {
  method: "GET" | "POST";
  /** An exact path, or a prefix when it ends with `/`. */
  path: string;
  /** A model call when absent; else the answer, from the path and the session's model. */
  answer?: (path: string, model: string) => DialectAnswer;
  /**
   * A side request that is no model turn (e.g. Anthropic's `count_tokens`): its JSON body
   * goes to the same path under the provider's base URL with the run's model, and the
   * provider's answer comes back as it is (secrets scrubbed). Never recorded.
   */
  relay?: boolean;
}

/** The finish reasons a trace records (`FinishReason`, verifiers/v1/types.py@a60a606). */
export type TraceFinishReason = "stop" | "length" | "tool_calls";

/** Options of {@link Dialect.prepare}. */
export interface PrepareOptions {
  /** Ask the provider to report usage on a stream (when the dialect has such an option). */
  streamUsage: boolean;
}

/** Metadata of an answer a dialect renders itself. */
export interface RenderMeta {
  id: string;
  model: string;
  /** Seconds since the epoch. */
  created: number;
  /** Streams: end with a usage event (when the program asked for usage). */
  includeUsage?: boolean;
}

/**
 * Call settings of a translated request, named as the trace records them (chat completions'
 * names); each dialect says them in its own words.
 */
export interface NeutralSettings {
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop?: string[];
  seed?: number;
  reasoning_effort?: string;
  /** Whether and which tool the model must call. */
  tool_choice?: "auto" | "none" | "required" | { name: string };
  parallel_tool_calls?: boolean;
  /** Structured output: a JSON schema (`name`, `schema`, `strict`), or any JSON object. */
  response_format?: { type: "json_object" } | {
    type: "json_schema";
    name: string;
    schema: Record<string, unknown>;
    strict: boolean | null;
  };
  /** The end user the program names. */
  user?: string;
}

/**
 * A program's request in the trace's terms, for a provider that does not serve the
 * program's dialect: the conversation, the tools (function tools only), whether it
 * streams, and its settings.
 */
export interface NeutralRequest {
  messages: Message[];
  tools: ToolSpec[] | null;
  stream: boolean;
  settings: NeutralSettings;
}

/** A piece of a streamed answer, in the trace's terms (what a translated stream relays). */
export type AnswerDelta =
  | { kind: "text"; text: string }
  | { kind: "reasoning"; text: string }
  /** A tool call's start (`id` and `name`) or more of its arguments, by its position. */
  | { kind: "tool_call"; index: number; id?: string; name?: string; arguments?: string };

/**
 * Renders a translated stream in a program's dialect as the provider's answer arrives:
 * each method returns whole SSE events to send. `start` opens the stream, `delta` carries
 * each piece of the answer as it comes, `end` closes it with the whole answer (its trace
 * finish reason and usage), the dialect's terminal event last; `error` reports a provider
 * error mid-stream in the dialect's own error event.
 */
export interface DialectStreamRenderer {
  start(): string[];
  delta(delta: AnswerDelta): string[];
  end(outcome: DialectOutcome): string[];
  error(message: string): string[];
}

/** A model API dialect (OpenAI chat completions, Anthropic messages, ...). */
export interface Dialect {
  /** A short name, e.g. `openai-chat`. */
  readonly id: string;
  /** The call's path under the provider's base URL; also recorded as `ModelCall.endpoint`. */
  readonly endpoint: string;
  /** Every route served (model calls and informational ones). */
  readonly routes: readonly DialectRoute[];
  /** The stream's terminal event as said in errors (e.g. `data: [DONE]`). */
  readonly terminalEvent?: string;
  /** The provider's auth headers for `key`. @default `authorization: Bearer <key>` */
  upstreamAuth?(key: string): Record<string, string>;
  /** Headers sent upstream unless the program sent its own (e.g. an API version). */
  readonly upstreamHeaders?: Readonly<Record<string, string>>;
  /**
   * A provider's finish reason as the trace records it; null for any other (the trace then
   * keeps the native one). @default the chat reasons kept, any other null
   */
  finishReason?(native: string | null): TraceFinishReason | null;
  /** Paths answered before authentication (e.g. an API this server does not serve). */
  refuse?(path: string): DialectAnswer | null;
  /** Reads a program's parsed JSON body; a string is the reason it is not a valid request. */
  parseRequest(json: unknown): DialectRequest | string;
  /**
   * The request with the messages an interception hook rewrote (same count and roles), its
   * body rewritten to match; a string is why it cannot be. Absent: a rewritten request goes
   * upstream translated (see lib/interception/translate.ts).
   */
  rewriteRequest?(request: DialectRequest, messages: Message[]): DialectRequest | string;
  /** Builds the upstream body: the run's model and sampling over the program's. */
  prepare(
    request: DialectRequest,
    model: string,
    sampling: Record<string, unknown>,
    options: PrepareOptions,
  ): UpstreamCall;
  /**
   * True when the provider refused the stream-usage option (status and body of its
   * error); the call is then sent again without it, and later calls never ask.
   */
  refusedStreamUsage?(status: number, text: string): boolean;
  /** Drops the stream-usage option from an upstream body. */
  withoutStreamUsage?(call: UpstreamCall): UpstreamCall;
  /** Reads a provider's JSON answer; null when it carries no answer. */
  parseResponse(json: unknown): DialectOutcome | null;
  /**
   * Why a JSON answer {@link parseResponse} found none in carries none (e.g. a response
   * that failed), as said in the call's error. @default "provider returned a completion
   * without choices"
   */
  unanswered?(json: unknown): string;
  /**
   * A reader for one streamed answer; `onDelta`, when given, is told each piece of the
   * answer as its event is read (a translated stream re-renders them; see `prepareNeutral`).
   */
  streamReader(relayUsage: boolean, onDelta?: (delta: AnswerDelta) => void): DialectStreamReader;
  /** Renders an answer as the provider's JSON body. */
  renderResponse(outcome: DialectOutcome, meta: RenderMeta): unknown;
  /** Renders an answer as the provider's stream: each string one whole SSE event. */
  renderStream(outcome: DialectOutcome, meta: RenderMeta): string[];
  /**
   * Translation, the program's side: the request in the trace's terms, or — a string —
   * what in it a provider of another dialect cannot be sent (a server-side tool, a stored
   * response, a document): the call is then refused in this dialect's error body, never
   * sent with the part dropped. Absent: this dialect's requests are never translated.
   */
  neutralRequest?(request: DialectRequest): NeutralRequest | string;
  /**
   * Translation, the provider's side: the upstream body for a request of another dialect,
   * the run's model and sampling applied as in {@link Dialect.prepare}; a string is what
   * this dialect cannot carry. Its answer is read by {@link Dialect.parseResponse} or the
   * stream reader (with `onDelta`). Absent: a provider of this dialect is never sent
   * translated requests.
   */
  prepareNeutral?(
    request: NeutralRequest,
    model: string,
    sampling: Record<string, unknown>,
    options: PrepareOptions,
  ): UpstreamCall | string;
  /** Translation, the program's side: renders a provider's streamed answer as it comes. */
  streamRenderer?(meta: RenderMeta): DialectStreamRenderer;
  /** This dialect's error body (`status`: the HTTP status it is sent with, when known). */
  errorBody(message: string, type?: string, code?: string | null, status?: number): unknown;
  /** The message of a provider's error body (or the text itself). */
  errorMessage(text: string): string;
  /** True when an error says the prompt does not fit the model's context. */
  isContextLengthError(status: number, message: string): boolean;
}

/** The route of `dialect` serving `path`, if any (whatever its method). */
export function findRoute(dialect: Dialect, path: string): DialectRoute | undefined {
  return dialect.routes.find((r) =>
    r.path.endsWith("/") ? path.startsWith(r.path) : path === r.path
  );
}
