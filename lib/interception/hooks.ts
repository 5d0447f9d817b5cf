/**
 * A rollout's interception hooks, run with Python v1's rules (verifiers/v1/session.py@a60a606,
 * `rewrite_request`, `rewrite_response`, `handle_tool`): request hooks in order, each given a
 * copy, may rewrite only the user and tool messages the graph has not committed (same count,
 * roles, tool-call ids and tools); then the request stops. Response hooks may replace the
 * assistant message by a text-only one (the finish reason becomes `stop`); then the response
 * stops. A hook that breaks a rule or throws fails the rollout with a `TaskError`.
 *
 * @module
 */
import { TaskError } from "../../kit/errors.ts";
import type {
  InterceptedRequest,
  InterceptedResponse,
  Replacement,
  ToolHookVerdict,
} from "../../kit/intercept.ts";
import type { Message, MessageNode } from "../../kit/trace/types.ts";
import { branches } from "../../kit/trace/derived.ts";
import { addMessages, canonicalJson, sameMessage } from "./graph.ts";

type MaybePromise<T> = T | Promise<T>;

/** A hook with its name (recorded in the trace) and priority. */
export interface NamedHook<F> {
  name: string;
  priority?: number;
  fn: F;
}

/** The hooks of one rollout, bound to its context. */
export interface SessionHooks {
  request: NamedHook<(r: InterceptedRequest) => MaybePromise<Replacement<InterceptedRequest>>>[];
  response: NamedHook<
    (r: InterceptedResponse) => MaybePromise<Replacement<InterceptedResponse>>
  >[];
  requestStops: NamedHook<(r: InterceptedRequest) => MaybePromise<boolean>>[];
  responseStops: NamedHook<(r: InterceptedResponse) => MaybePromise<boolean>>[];
}

/** The outcome of running hooks over one boundary. */
export interface HookVerdict<T> {
  value: T;
  /** The names of the hooks that changed it, in order. */
  rewrites: string[];
  /** The stop that fired, if any. */
  stopped: string | null;
}

/** Hooks in Python's order: descending priority, then name. */
export function ordered<H extends { name: string; priority?: number }>(hooks: H[]): H[] {
  return [...hooks].sort((a, b) =>
    (b.priority ?? 0) - (a.priority ?? 0) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}

/** True when the session has any hook at all. */
export function hasHooks(hooks: SessionHooks | undefined): hooks is SessionHooks {
  return hooks !== undefined &&
    (hooks.request.length + hooks.response.length + hooks.requestStops.length +
        hooks.responseStops.length) > 0;
}

/** Values equal as JSON, absent and null fields alike (pydantic's equality of defaults). */
export function sameJson(a: unknown, b: unknown): boolean {
  return canonicalJson(pruned(a)) === canonicalJson(pruned(b));
}

function pruned(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(pruned);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = pruned(v);
  return out;
}

/** How many leading messages the graph already holds (the rest is the request's new tail). */
export function committedPrefix(nodes: MessageNode[], messages: Message[]): number {
  let parent: number | null = null;
  let matched = 0;
  for (const message of messages) {
    let hit = -1;
    for (let i = nodes.length - 1; i >= 0 && hit < 0; i--) {
      if (nodes[i]!.parent === parent && sameMessage(nodes[i]!.message, message)) hit = i;
    }
    if (hit < 0) break;
    parent = hit;
    matched++;
  }
  return matched;
}

function failed(what: string, err: unknown): TaskError {
  if (err instanceof TaskError) return err;
  const name = err instanceof Error ? err.name : "Error";
  const message = err instanceof Error ? err.message : String(err);
  return new TaskError(`${what} interception failed: ${name}: ${message}`);
}

/**
 * Runs the request hooks and stops over one request. `prepared` holds tool results already
 * intercepted on their way to the agent: when every new message is one of them, the
 * request hooks do not run again.
 */
export async function interceptRequest(
  hooks: SessionHooks,
  nodes: MessageNode[],
  request: InterceptedRequest,
  prepared: ReadonlyMap<string, Message>,
  runStops = true,
): Promise<HookVerdict<InterceptedRequest>> {
  const start = committedPrefix(nodes, request.messages);
  const candidates = new Set<number>();
  const done = new Set<number>();
  request.messages.forEach((m, i) => {
    if (i < start || (m.role !== "user" && m.role !== "tool")) return;
    candidates.add(i);
    if (m.role === "tool") {
      const kept = prepared.get(m.tool_call_id);
      if (kept !== undefined && sameJson(kept, m)) done.add(i);
    }
  });
  const already = candidates.size > 0 && candidates.size === done.size;
  let current = request;
  const rewrites: string[] = [];
  try {
    for (const hook of already ? [] : hooks.request) {
      const result = await hook.fn(structuredClone(current));
      if (result === null || result === undefined) continue;
      checkRequest(current, result, candidates, done);
      if (!sameJson(result, current)) {
        // unchanged messages stay the very objects they were (a dialect rewrites only the others)
        const was = current.messages;
        current = {
          messages: result.messages.map((m, i) => sameJson(m, was[i]) ? was[i]! : m),
          tools: current.tools,
        };
        rewrites.push(hook.name);
      }
    }
    for (const stop of runStops ? hooks.requestStops : []) {
      const hit = await stop.fn(structuredClone(current));
      if (typeof hit !== "boolean") {
        throw new TypeError(`@stop must return bool, got ${typeof hit}`);
      }
      if (hit) return { value: current, rewrites, stopped: stop.name };
    }
  } catch (err) {
    throw failed("request", err);
  }
  return { value: current, rewrites, stopped: null };
}

function checkRequest(
  before: InterceptedRequest,
  after: InterceptedRequest,
  candidates: Set<number>,
  done: Set<number>,
): void {
  if (!Array.isArray(after?.messages)) throw new TypeError("expected a request with messages");
  if (after.messages.length !== before.messages.length) {
    throw new Error("request interceptors cannot add or remove messages");
  }
  if (!sameJson(after.tools ?? null, before.tools ?? null)) {
    throw new Error("request interceptors cannot rewrite tools");
  }
  before.messages.forEach((was, i) => {
    const now = after.messages[i]!;
    if (sameJson(was, now)) return;
    if (!candidates.has(i) || done.has(i)) {
      throw new Error("request interceptors can only rewrite new user or tool messages");
    }
    if (now.role !== was.role) throw new TypeError(`expected ${was.role}, got ${now.role}`);
    if (was.role === "tool" && now.role === "tool" && now.tool_call_id !== was.tool_call_id) {
      throw new Error("request interceptors cannot change a tool-call ID");
    }
  });
}

/** Runs the response hooks and stops over one response. */
export async function interceptResponse(
  hooks: SessionHooks,
  response: InterceptedResponse,
): Promise<HookVerdict<InterceptedResponse>> {
  let current = response;
  const rewrites: string[] = [];
  try {
    for (const hook of hooks.response) {
      const result = await hook.fn(structuredClone(current));
      if (result === null || result === undefined || sameJson(result, current)) continue;
      const m = result.message;
      if (m?.role !== "assistant") {
        throw new Error("response interceptors can only replace the assistant message");
      }
      if (m.reasoning_content || (m.tool_calls?.length ?? 0) > 0 || m.provider_state) {
        throw new Error("response interceptors must return an inert text-only message");
      }
      current = { message: { role: "assistant", content: m.content ?? "" }, finishReason: "stop" };
      rewrites.push(hook.name);
    }
    for (const stop of hooks.responseStops) {
      const hit = await stop.fn(structuredClone(current));
      if (typeof hit !== "boolean") {
        throw new TypeError(`@stop must return bool, got ${typeof hit}`);
      }
      if (hit) return { value: current, rewrites, stopped: stop.name };
    }
  } catch (err) {
    throw failed("response", err);
  }
  return { value: current, rewrites, stopped: null };
}

/** The state of a session the tool hooks read and write. */
export interface ToolHookSession {
  hooks: SessionHooks;
  nodes: MessageNode[];
  tools: InterceptedRequest["tools"];
  /** Tool results intercepted, by call id, until the model request carrying them commits. */
  prepared: Map<string, Message>;
  recordRewrites(names: string[]): void;
  stop(condition: string): void;
}

type ToolMessage = Extract<Message, { role: "tool" }>;

/**
 * A harness's tool result (`before`: empty, ahead of running the call; `after`: the real
 * one) through the request hooks, as the last message of the branch whose assistant made
 * the call.
 */
export async function interceptToolResult(
  s: ToolHookSession,
  phase: "before" | "after",
  message: ToolMessage,
): Promise<ToolHookVerdict> {
  const matching = branches(s.nodes).filter((path) => {
    const last = s.nodes[path[path.length - 1]!]!.message;
    return last.role === "assistant" &&
      (last.tool_calls ?? []).some((c) => c.id === message.tool_call_id);
  });
  if (matching.length !== 1) {
    throw new TaskError(
      `tool call ${JSON.stringify(message.tool_call_id)} matched ${matching.length} branches`,
    );
  }
  const path = matching[0]!;
  const branch = path.map((i) => s.nodes[i]!.message);
  const assistant = branch[branch.length - 1]!;
  const previous = (assistant.role === "assistant" ? assistant.tool_calls ?? [] : [])
    .flatMap((c) =>
      c.id !== message.tool_call_id && s.prepared.has(c.id) ? [s.prepared.get(c.id)!] : []
    );
  const verdict = await interceptRequest(s.hooks, s.nodes, {
    messages: [...branch, ...previous, message],
    tools: s.tools,
  }, s.prepared);
  const candidate = verdict.value.messages[verdict.value.messages.length - 1] as ToolMessage;
  s.recordRewrites(verdict.rewrites);
  if (verdict.stopped !== null) {
    const committed = phase === "after"
      ? verdict.value.messages
      : verdict.value.messages.slice(0, -1);
    addMessages(s.nodes, committed);
    for (const m of committed) if (m.role === "tool") s.prepared.delete(m.tool_call_id);
    s.stop(verdict.stopped);
    return { action: "stop", reason: verdict.stopped };
  }
  const changed = !sameJson(candidate, message);
  if (phase === "before" && !changed) return { action: "allow" };
  s.prepared.set(candidate.tool_call_id, candidate);
  return changed ? { action: "rewrite", message: candidate } : { action: "allow" };
}

/** Forgets the intercepted tool results a committed request carried. */
export function consumePrepared(prepared: Map<string, Message>, messages: Message[]): void {
  for (const m of messages) if (m.role === "tool") prepared.delete(m.tool_call_id);
}
