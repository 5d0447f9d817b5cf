/**
 * The context an LLM judge scores with: chat completions to the judge's endpoint and model
 * (falling back to the run's), sent through the run's interception server as every model
 * call of a rollout is — one session per call, the judge's model and sampling swapped in,
 * the provider's dialect translated, the exchange recorded as a `ModelCall` marked
 * `auxiliary: "judge:<key>"`. The call is kept in its `trace.info.judge` record (with the
 * reply text, parsed verdict, usage and time), and its usage in `trace.extra_usage` — also
 * when parsing fails. It stays out of `trace.calls` and the message graph: Python v1 reads
 * those as the agent's (its `usage`, `num_turns` and `last_reply` come from them), and
 * keeps judges' usage apart in `extra_usage` (verifiers/v1/trace.py at a60a606).
 *
 * @module
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import process from "node:process";
import {
  errorMessage,
  InputError,
  ProviderError,
  TaskError,
  VerifiersError,
} from "../../kit/errors.ts";
import type { ClientConfigValue } from "./rollout.ts";
import { DEFAULT_BASE_URL, type JudgeEntry } from "../config/eval_config.ts";
import { parseChatUsage } from "../dialects/chat/codec.ts";
import { errorMessageOf } from "../../kit/wire/chat.ts";
import { anySignal } from "../../kit/util/any_signal.ts";
import { createProviderClient, type ProviderClient, stallMs } from "../clients/provider_client.ts";
import { inProcessClient } from "../clients/in_process_client.ts";
import type { InterceptionServer, SessionTrace } from "../interception/mod.ts";
import type {
  HookContext,
  JudgeCompleteOptions,
  JudgeCompletion,
  JudgeContext,
  JudgePlugin,
} from "../../kit/contract.ts";
import type { Message, ModelCall } from "../../kit/trace/types.ts";
import type { ConfiguredJudge } from "./scoring.ts";
import { judgeRewardKey } from "../config/judge_key.ts";
import { quote } from "../../kit/util/quote.ts";

/** Run-level fallbacks for judge entries. */
export interface JudgeFallbacks {
  client: ClientConfigValue;
  model: string;
  /** A client for the run's own endpoint (reused when the judge sets no endpoint). */
  runClient: ProviderClient;
  /** The run's interception server, which every judge call goes through. */
  interception: Pick<InterceptionServer, "open" | "handle">;
}

/** Options of {@link configureJudge}. */
export interface ConfigureJudgeOptions {
  /** Base directory of a relative `prompt` file. @default process.cwd() */
  cwd?: string;
}

function readPromptFile(key: string, path: string, cwd: string): string {
  try {
    return readFileSync(resolve(cwd, path), "utf8");
  } catch (err) {
    throw new InputError(
      "judge_prompt_unreadable",
      `judge '${key}': cannot read its prompt file ${quote(path)}: ${errorMessage(err)}`,
      { hint: "`prompt` names a template file (relative to the working directory)", cause: err },
    );
  }
}

/**
 * Binds a judge plugin and its config entry into a {@link ConfiguredJudge}. Before any
 * rollout it reads the entry's `prompt` file and runs the plugin's `check`; either
 * failing throws an {@link InputError} naming the judge.
 */
export function configureJudge(
  plugin: JudgePlugin,
  entry: JudgeEntry,
  fallbacks: JudgeFallbacks,
  options: ConfigureJudgeOptions = {},
): ConfiguredJudge {
  const key = judgeRewardKey(entry, plugin);
  const prompt = entry.prompt
    ? readPromptFile(key, entry.prompt, options.cwd ?? process.cwd())
    : null;
  if (plugin.check) {
    try {
      plugin.check(entry);
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw new InputError("judge_invalid", `judge '${key}': ${errorMessage(err)}`, {
        hint: err instanceof VerifiersError ? err.hint : undefined,
        cause: err,
      });
    }
  }
  const ownEndpoint = entry.base_url !== null || entry.api_key_var !== null ||
    Object.keys(entry.headers).length > 0;
  const model = entry.model ?? fallbacks.model;
  const sampling = Object.fromEntries(
    Object.entries(entry.sampling).filter(([, v]) => v !== null && v !== undefined),
  );

  const complete = async (
    base: HookContext,
    messages: Message[],
    options: JudgeCompleteOptions,
  ): Promise<JudgeCompletion> => {
    if (fallbacks.model === "oracle" && (entry.model === null || entry.base_url === null)) {
      throw new TaskError(`judge '${key}' cannot call the oracle model`, {
        hint: "with --model oracle, set `model` and `base_url` on the judge entry",
      });
    }
    const body: Record<string, unknown> = { model, messages };
    if (options.responseFormat !== undefined) body.response_format = options.responseFormat;
    // A judge's own endpoint gets a client per call, closed when the call returns.
    const upstream = ownEndpoint
      ? createProviderClient({
        baseUrl: entry.base_url ?? fallbacks.client.base_url ?? DEFAULT_BASE_URL,
        apiKeyVar: entry.api_key_var ?? fallbacks.client.api_key_var,
        headers: { ...fallbacks.client.headers, ...entry.headers },
        stallTimeoutMs: stallMs(fallbacks.client.stall_timeout),
      })
      : fallbacks.runClient;
    // the session records into a trace of its own: the judge's exchange is not the agent's
    const recorded: SessionTrace = {
      id: base.trace.id,
      nodes: [],
      calls: [],
      tools: [],
      stop_condition: null,
    };
    const session = fallbacks.interception.open({
      trace: recorded,
      model,
      sampling,
      client: upstream,
      limits: {},
      auxiliary: () => `judge:${key}`,
    });
    const client = inProcessClient(session.endpoint, fallbacks.interception.handle);
    const started = Date.now() / 1000;
    let json: unknown;
    // a cancelled call ends its session, which aborts the upstream request
    const signal = anySignal([base.signal, options.signal]);
    const cancel = () => session.close();
    signal.addEventListener("abort", cancel, { once: true });
    try {
      const res = await client.chatCompletions(body, {
        signal,
        headers: { authorization: `Bearer ${session.secret}` },
      });
      signal.throwIfAborted();
      if (res.kind !== "json") {
        res.cancel();
        throw new TaskError(`judge '${key}': the judge endpoint answered a stream`);
      }
      if (res.status >= 400) {
        const msg = errorMessageOf(res.text, 300);
        throw new ProviderError(`judge '${key}': ${res.status} ${msg}`, res.status);
      }
      json = res.json;
    } finally {
      signal.removeEventListener("abort", cancel);
      session.close();
      if (ownEndpoint) upstream.close();
    }
    const call = recorded.calls[0];
    const choice = (json as {
      choices?: {
        message?: { content?: unknown; refusal?: unknown };
        finish_reason?: unknown;
      }[];
    })?.choices?.[0];
    const content = choice?.message?.content;
    const text = typeof content === "string" ? content : "";
    const refusal = typeof choice?.message?.refusal === "string" ? choice.message.refusal : null;
    const finish = typeof choice?.finish_reason === "string" ? choice.finish_reason : null;
    const rawUsage = (json as { usage?: Record<string, unknown> })?.usage;
    const usage = rawUsage
      ? {
        prompt_tokens: Number(rawUsage.prompt_tokens ?? 0),
        completion_tokens: Number(rawUsage.completion_tokens ?? 0),
      }
      : null;
    const rec: Record<string, unknown> = {
      judge: key,
      model,
      text,
      parsed: null,
      usage,
      time: { start: started, end: Date.now() / 1000 },
      // its node indexed the judge's own messages, which the trace does not keep
      ...(call ? { call: { ...call, node: null } satisfies ModelCall } : {}),
    };
    ((base.trace.info.judge ??= []) as unknown[]).push(rec);
    const extra = parseChatUsage(rawUsage);
    if (extra) base.trace.extra_usage.push({ ...extra, source: `judge:${key}`, model });
    if (options.responseFormat !== undefined) {
      if (refusal !== null) throw new TaskError(`judge refused structured output: ${refusal}`);
      if (!text.trim()) {
        throw new TaskError(
          `judge returned no parseable structured output (finish_reason=${finish})`,
        );
      }
    }
    let parsed: unknown = null;
    if (options.parse) parsed = rec.parsed = options.parse(text) ?? null;
    return { text, parsed, usage, finish_reason: finish, refusal };
  };

  return {
    plugin,
    entry,
    key,
    context(base: HookContext): JudgeContext {
      return {
        ...base,
        judge: entry,
        rewardKey: key,
        prompt,
        complete: (messages, opts = {}) => complete(base, messages, opts),
      };
    },
  };
}
