/**
 * The host-side agent loop shared by the `null` and `bash` harnesses. It speaks the OpenAI
 * chat completions protocol to the rollout's interception endpoint, exactly as an agent
 * program inside the runtime would: post the conversation, append the reply, run the
 * reply's tool calls, append their results, repeat until a reply has no tool calls.
 *
 * Like an SDK-based program it retries 429/5xx and connection failures (sending
 * `x-stainless-retry-count` and the identical body, so the interception server replays
 * instead of sampling again), and it "exits" with code 1 when a call is finally refused.
 *
 * Requests go through `wireFetchText` (kit/wire/in_process.ts): to the run's own interception
 * server they are delivered in-process, with no socket; to any other endpoint, by `fetch`.
 *
 * @module
 */
import type { ProgramResult } from "../runtime/runtime.ts";
import type { Message } from "../trace/types.ts";
import type { ChatToolSpec, HostTool, ToolCallRecord } from "./tools.ts";
import { sleep } from "../util/sleep.ts";
import { wireFetchText } from "../wire/in_process.ts";
import { TOOL_HOOK_PATH } from "../intercept.ts";
import {
  CHAT_COMPLETIONS_PATH,
  type ChatMessage,
  errorMessageOf,
  toChatMessages,
} from "../wire/chat.ts";

/** Options of {@link runChatLoop}. */
export interface ChatLoopOptions {
  /** Endpoint base including `/v1`; the loop posts to `<endpoint>/chat/completions`. */
  endpoint: string;
  /** Bearer token for the endpoint. */
  secret: string;
  /** Model name sent with each request. */
  model: string;
  /** The initial conversation (trace shape). */
  messages: Message[];
  /** Tools the model may call; none means no `tools` key is sent. @default [] */
  tools?: HostTool[];
  /** Cancels the loop (in-flight request and tool command). */
  signal: AbortSignal;
  /** Run-log callback. */
  log?: (message: string) => void;
  /** Receives every tool call once it is answered (for the trace). */
  onToolCall?: (record: ToolCallRecord) => void;
  /** Retries of a 429/5xx/connection failure, as the OpenAI SDKs do. @default 2 */
  maxRetries?: number;
  /** Delay before the first retry in ms; doubles per retry. @default 500 */
  retryDelayMs?: number;
  /**
   * Send each tool call's result through the task's hooks (the interception server's
   * `/tool` route, kit/intercept.ts): before running it (a hook may block it by supplying the
   * result) and after (a hook may replace the result). @default false
   */
  toolHooks?: boolean;
}

/** Longest error body kept in the result's stderr. */
const MAX_ERROR_CHARS = 2000;

/** Assistant reply fields never sent back (response-only in the OpenAI API). */
const RESPONSE_ONLY_FIELDS = new Set(["refusal", "annotations", "audio", "function_call"]);

/**
 * Runs the chat loop to completion. Returns exit code 0 when a reply has no tool calls,
 * 1 (status and error message in stderr) when the endpoint refuses a call or answers
 * something that is not a chat completion. Throws only when `signal` aborts or a tool's
 * runtime fails.
 */
export async function runChatLoop(options: ChatLoopOptions): Promise<ProgramResult> {
  const tools = options.tools ?? [];
  const byName = new Map(tools.map((t) => [t.spec.function.name, t]));
  const specs: ChatToolSpec[] = tools.map((t) => t.spec);
  const messages: ChatMessage[] = toChatMessages(options.messages);
  const url = options.endpoint.replace(/\/+$/, "") + CHAT_COMPLETIONS_PATH;

  for (;;) {
    options.signal.throwIfAborted();
    const body: Record<string, unknown> = { model: options.model, messages };
    if (specs.length > 0) body.tools = specs;
    const reply = await postChat(url, JSON.stringify(body), options);
    if (!reply.ok) return { exitCode: 1, stdout: "", stderr: reply.error };

    const message = reply.message;
    messages.push(message);
    const calls = Array.isArray(message.tool_calls) ? message.tool_calls as unknown[] : [];
    if (calls.length === 0) {
      const content = typeof message.content === "string" ? message.content : "";
      return { exitCode: 0, stdout: content, stderr: "" };
    }
    for (const call of calls) {
      options.signal.throwIfAborted();
      const hook = options.toolHooks ? toolHook(options) : null;
      const started = performance.now();
      let result: ToolCallOutcome | null = null;
      const identity = callIdentity(call);
      if (hook !== null && identity.id !== "") {
        const before = await hook("before", { id: identity.id, content: "" });
        if (before.action === "stop") return before.result;
        if (before.action === "rewrite") {
          result = { ...identity, content: before.content, error: null };
        }
      }
      if (result === null) {
        result = await runToolCall(call, byName, options.signal);
        if (hook !== null) {
          const after = await hook("after", result);
          if (after.action === "stop") return after.result;
          if (after.action === "rewrite") result = { ...result, content: after.content };
        }
      }
      messages.push({ role: "tool", tool_call_id: result.id, content: result.content });
      options.onToolCall?.({
        id: result.id,
        name: result.name,
        arguments: result.raw,
        result: result.content,
        error: result.error,
        duration: (performance.now() - started) / 1000,
      });
    }
  }
}

type HookAnswer =
  | { action: "allow" }
  | { action: "rewrite"; content: string }
  | { action: "stop"; result: ProgramResult };

/** Posts tool results to the interception server's tool hook route. */
function toolHook(options: ChatLoopOptions) {
  const url = options.endpoint.replace(/\/+$/, "").replace(/\/v1$/, "") + TOOL_HOOK_PATH;
  return async (
    phase: "before" | "after",
    result: { id: string; content: string },
  ): Promise<HookAnswer> => {
    const res = await wireFetchText(url, {
      method: "POST",
      headers: { "content-type": "application/json", "authorization": `Bearer ${options.secret}` },
      body: JSON.stringify({
        phase,
        message: { role: "tool", tool_call_id: result.id, content: result.content },
      }),
      signal: options.signal,
    });
    const stop = (why: string): HookAnswer => ({
      action: "stop",
      result: { exitCode: 1, stdout: "", stderr: why },
    });
    // an endpoint that serves no tool hooks (not an interception server) lets every call run
    if (res.status === 404 || res.status === 405) return { action: "allow" };
    if (res.status !== 200) {
      return stop(`${res.status} ${errorMessageOf(res.text, MAX_ERROR_CHARS)}`);
    }
    const verdict = (res.json ?? JSON.parse(res.text)) as {
      action?: string;
      reason?: string | null;
      message?: { content?: unknown };
    };
    if (verdict.action === "stop") return stop(`400 rollout stopped: ${verdict.reason ?? ""}`);
    if (verdict.action === "rewrite" && typeof verdict.message?.content === "string") {
      return { action: "rewrite", content: verdict.message.content };
    }
    return { action: "allow" };
  };
}

type PostResult = { ok: true; message: ChatMessage } | { ok: false; error: string };

/** One chat completion with SDK-style retries; never throws except on abort. */
async function postChat(url: string, body: string, options: ChatLoopOptions): Promise<PostResult> {
  const maxRetries = options.maxRetries ?? 2;
  const baseDelay = options.retryDelayMs ?? 500;
  for (let attempt = 0;; attempt++) {
    let status = 0;
    let detail: string;
    let retryAfterMs: number | null = null;
    try {
      const res = await wireFetchText(url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "authorization": `Bearer ${options.secret}`,
          "x-stainless-retry-count": String(attempt),
        },
        body,
        signal: options.signal,
      });
      if (res.status >= 200 && res.status < 300) return parseCompletion(res.text, res.json);
      status = res.status;
      detail = errorMessageOf(res.text, MAX_ERROR_CHARS);
      retryAfterMs = parseRetryAfter(res.headers["retry-after"] ?? null);
    } catch (err) {
      options.signal.throwIfAborted();
      detail = `connection error: ${err instanceof Error ? err.message : String(err)}`;
    }
    const retryable = status === 0 || status === 429 || status >= 500;
    if (!retryable || attempt >= maxRetries) {
      return { ok: false, error: status === 0 ? detail : `${status} ${detail}` };
    }
    const delay = retryAfterMs ?? baseDelay * 2 ** attempt;
    options.log?.(
      `chat completion failed (${status || "no response"}); retry ${attempt + 1}/${maxRetries}`,
    );
    await sleep(delay, options.signal);
  }
}

/**
 * Reads `choices[0].message` of a chat completion body: `json` when the reply came parsed
 * (from the interception in this process), else the text parsed.
 */
function parseCompletion(text: string, json: unknown): PostResult {
  let data = json;
  if (data === undefined) {
    try {
      data = JSON.parse(text);
    } catch {
      return { ok: false, error: `malformed response: not JSON: ${text.slice(0, 200)}` };
    }
  }
  const choices = (data as { choices?: unknown })?.choices;
  const message = Array.isArray(choices) ? (choices[0] as { message?: unknown })?.message : null;
  if (typeof message !== "object" || message === null || Array.isArray(message)) {
    return { ok: false, error: `malformed response: no choices[0].message: ${text.slice(0, 200)}` };
  }
  const out: ChatMessage = { role: "assistant", content: null };
  const fields = message as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (key === "role" || value === null || value === undefined) continue;
    if (RESPONSE_ONLY_FIELDS.has(key)) continue;
    if (key === "tool_calls" && Array.isArray(value) && value.length === 0) continue;
    out[key] = value;
  }
  return { ok: true, message: out };
}

interface ToolCallOutcome {
  id: string;
  name: string;
  raw: string;
  content: string;
  error: string | null;
}

/** A tool call's id, name and arguments as sent ("" where the model left one out). */
function callIdentity(call: unknown): { id: string; name: string; raw: string } {
  const c = (call ?? {}) as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
  const raw = c.function?.arguments;
  return {
    id: typeof c.id === "string" ? c.id : "",
    name: typeof c.function?.name === "string" ? c.function.name : "",
    raw: typeof raw === "string" ? raw : JSON.stringify(raw ?? null),
  };
}

/** Runs one tool call; bad calls and {@link ToolError}s become corrective text. */
async function runToolCall(
  call: unknown,
  tools: Map<string, HostTool>,
  signal: AbortSignal,
): Promise<ToolCallOutcome> {
  const { id, name, raw: rawText } = callIdentity(call);
  const raw = (call as { function?: { arguments?: unknown } } | null)?.function?.arguments;
  const failed = (error: string): ToolCallOutcome => ({
    id,
    name,
    raw: rawText,
    content: `Error: ${error}`,
    error,
  });
  const tool = tools.get(name);
  if (!tool) {
    const available = tools.size > 0 ? [...tools.keys()].join(", ") : "none";
    return failed(`unknown tool '${name}'. Available tools: ${available}.`);
  }
  let args: unknown;
  try {
    args = typeof raw === "string" ? JSON.parse(raw) : raw;
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return failed(`the arguments of tool '${name}' are not valid JSON (${why}).`);
  }
  if (typeof args !== "object" || args === null || Array.isArray(args)) {
    return failed(`the arguments of tool '${name}' must be a JSON object.`);
  }
  try {
    const content = await tool.run(args as Record<string, unknown>, signal);
    return { id, name, raw: rawText, content, error: null };
  } catch (err) {
    if (err instanceof Error && err.name === "ToolError") return failed(err.message);
    throw err;
  }
}

/** `Retry-After` in ms when it is a sane number of seconds (0 < s <= 60), else null. */
function parseRetryAfter(value: string | null): number | null {
  if (value === null) return null;
  const s = Number(value);
  return Number.isFinite(s) && s > 0 && s <= 60 ? s * 1000 : null;
}
