/**
 * Interception hooks: a taskset may look at each model request before it goes upstream and
 * at each model response before the agent gets it, rewrite either, or stop the rollout — the
 * counterpart of Python v1's `@vf.intercept` and of a `@vf.stop` typed on a `Request` or
 * `Response` (verifiers/v1/session.py@a60a606).
 *
 * A request hook may rewrite only the messages the graph has not committed yet, and only
 * user and tool messages (same count, same roles, same tool-call ids, same tools). A tool
 * call's result reaches the request hooks too, before the agent records it: for a harness
 * that asks (the host-side `bash` loop), a pre-execution result with empty content comes
 * first, and a hook that fills it blocks the call (the agent gets that text instead of
 * running the tool); the real result follows, and a hook may replace it. A response hook may
 * replace the assistant message with a text-only one (its finish reason becomes `stop`).
 * Each change is recorded by the hook's name in `trace.request_rewrites` /
 * `trace.response_rewrites`; a boundary stop ends the rollout with its name as
 * `trace.stop_condition` and the agent's call gets the dialect's error.
 *
 * @module
 */
import type { HookContext, TasksetConfig } from "./contract.ts";
import type { Message, ToolSpec } from "./trace/types.ts";

/** A model request as the hooks see it: the conversation and the tools offered. */
export interface InterceptedRequest {
  messages: Message[];
  /** The tools offered; null when the request offers none. */
  tools: ToolSpec[] | null;
}

/** A model response as the hooks see it: the reply and its finish reason. */
export interface InterceptedResponse {
  message: Message;
  /** The finish reason as the trace records it (`stop`, `length`, `tool_calls`), or null. */
  finishReason: string | null;
}

/** What a hook returns: the replacement, or nothing to leave the boundary unchanged. */
export type Replacement<T> = T | null | undefined;

/** Rewrites a model request (or a tool result on its way to the agent). Higher priority first. */
export interface RequestIntercept<C = TasksetConfig> {
  on: "request";
  fn(
    request: InterceptedRequest,
    ctx: HookContext<C>,
  ): Replacement<InterceptedRequest> | Promise<Replacement<InterceptedRequest>>;
  /** @default 0 */
  priority?: number;
}

/** Rewrites a model response before the agent gets it. Higher priority first. */
export interface ResponseIntercept<C = TasksetConfig> {
  on: "response";
  fn(
    response: InterceptedResponse,
    ctx: HookContext<C>,
  ): Replacement<InterceptedResponse> | Promise<Replacement<InterceptedResponse>>;
  /** @default 0 */
  priority?: number;
}

/** A request or response hook. */
export type InterceptHook<C = TasksetConfig> = RequestIntercept<C> | ResponseIntercept<C>;

/** Stops the rollout on a model request (after the request hooks ran): it is never sent. */
export interface RequestStopHook<C = TasksetConfig> {
  on: "request";
  fn(request: InterceptedRequest, ctx: HookContext<C>): boolean | Promise<boolean>;
  /** @default 0 */
  priority?: number;
}

/**
 * Stops the rollout on a model response (after the response hooks ran): the turn is
 * recorded, the agent never gets it.
 */
export interface ResponseStopHook<C = TasksetConfig> {
  on: "response";
  fn(response: InterceptedResponse, ctx: HookContext<C>): boolean | Promise<boolean>;
  /** @default 0 */
  priority?: number;
}

/** What a tool hook answers a harness (Python's `/tool` route): go on, use this, or stop. */
export type ToolHookVerdict =
  | { action: "allow" }
  | { action: "rewrite"; message: Extract<Message, { role: "tool" }> }
  | { action: "stop"; reason: string | null };

/** The path, under the interception server's root, a harness posts its tool hooks to. */
export const TOOL_HOOK_PATH = "/tool";
