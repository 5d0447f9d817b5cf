/**
 * The context an LLM judge scores with: a chat completion client aimed at the judge's
 * endpoint and model (falling back to the run's), recording every call in
 * `trace.info.judge` and its usage in `trace.extra_usage` — also when parsing fails.
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
import type {
  HookContext,
  JudgeCompleteOptions,
  JudgeCompletion,
  JudgeContext,
  JudgePlugin,
} from "../../kit/contract.ts";
import type { Message } from "../../kit/trace/types.ts";
import type { ConfiguredJudge } from "./scoring.ts";
import { judgeRewardKey } from "../config/judge_key.ts";

/** Run-level fallbacks for judge entries. */
export interface JudgeFallbacks {
  client: ClientConfigValue;
  model: string;
  /** A client for the run's own endpoint (reused when the judge sets no endpoint). */
  runClient: ProviderClient;
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
      `judge '${key}': cannot read its prompt file "${path}": ${errorMessage(err)}`,
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
    const body: Record<string, unknown> = { ...sampling, model, messages };
    if (options.responseFormat !== undefined) body.response_format = options.responseFormat;
    // A judge's own endpoint gets a client per call, closed when the call returns.
    const client = ownEndpoint
      ? createProviderClient({
        baseUrl: entry.base_url ?? fallbacks.client.base_url ?? DEFAULT_BASE_URL,
        apiKeyVar: entry.api_key_var ?? fallbacks.client.api_key_var,
        headers: { ...fallbacks.client.headers, ...entry.headers },
        stallTimeoutMs: stallMs(fallbacks.client.stall_timeout),
      })
      : fallbacks.runClient;
    const started = Date.now() / 1000;
    let json: unknown;
    try {
      const res = await client.chatCompletions(body, {
        signal: anySignal([base.signal, options.signal]),
      });
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
      if (ownEndpoint) client.close();
    }
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
