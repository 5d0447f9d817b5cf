/**
 * The context an LLM judge scores with: a chat completion client aimed at the judge's
 * endpoint and model (falling back to the run's), recording every call in
 * `trace.info.judge` and its usage in `trace.extra_usage` — also when parsing fails.
 *
 * @module
 */
import { ProviderError, TaskError } from "../errors.ts";
import type { ClientConfigValue } from "./rollout.ts";
import type { JudgeEntry } from "../config/eval_config.ts";
import { createProviderClient, type ProviderClient } from "../model/provider_client.ts";
import type {
  HookContext,
  JudgeCompletion,
  JudgeContext,
  JudgePlugin,
} from "../plugins/contract.ts";
import type { Message } from "../trace/types.ts";
import { type ConfiguredJudge, judgeRewardKey } from "./scoring.ts";

/** Run-level fallbacks for judge entries. */
export interface JudgeFallbacks {
  client: ClientConfigValue;
  model: string;
  /** A client for the run's own endpoint (reused when the judge sets no endpoint). */
  runClient: ProviderClient;
}

function usageOf(json: unknown): { prompt_tokens: number; completion_tokens: number } | null {
  const u = (json as { usage?: { prompt_tokens?: number; completion_tokens?: number } })?.usage;
  if (!u) return null;
  return { prompt_tokens: u.prompt_tokens ?? 0, completion_tokens: u.completion_tokens ?? 0 };
}

/** Binds a judge plugin and its config entry into a {@link ConfiguredJudge}. */
export function configureJudge(
  plugin: JudgePlugin,
  entry: JudgeEntry,
  fallbacks: JudgeFallbacks,
): ConfiguredJudge {
  const ownEndpoint = entry.base_url !== null || entry.api_key_var !== null ||
    Object.keys(entry.headers).length > 0;
  let client: ProviderClient | null = null;
  const getClient = () =>
    client ??= ownEndpoint
      ? createProviderClient({
        baseUrl: entry.base_url ?? fallbacks.client.base_url ?? "https://api.openai.com/v1",
        apiKeyVar: entry.api_key_var ?? fallbacks.client.api_key_var,
        headers: { ...fallbacks.client.headers, ...entry.headers },
      })
      : fallbacks.runClient;
  const model = entry.model ?? fallbacks.model;
  const key = judgeRewardKey(entry);
  return {
    plugin,
    entry,
    context(base: HookContext): JudgeContext {
      const complete = async (
        messages: Message[],
        options: { responseFormat?: unknown; parse?: (text: string) => unknown } = {},
      ): Promise<JudgeCompletion> => {
        const body: Record<string, unknown> = { ...entry.sampling, model, messages };
        if (options.responseFormat !== undefined) body.response_format = options.responseFormat;
        const started = Date.now() / 1000;
        const res = await getClient().chatCompletions(body, { signal: base.signal });
        if (res.kind !== "json") {
          throw new TaskError(`judge '${key}': the judge endpoint answered a stream`);
        }
        if (res.status >= 400) {
          const msg = (res.json as { error?: { message?: string } })?.error?.message ??
            res.text.slice(0, 300);
          throw new ProviderError(`judge '${key}': ${res.status} ${msg}`, res.status);
        }
        const text = String(
          (res.json as { choices?: { message?: { content?: unknown } }[] })?.choices?.[0]?.message
            ?.content ?? "",
        );
        const usage = usageOf(res.json);
        const records = (base.trace.info.judge ??= []) as unknown[];
        const rec: Record<string, unknown> = {
          judge: key,
          model,
          text,
          parsed: null,
          usage,
          time: { start: started, end: Date.now() / 1000 },
        };
        records.push(rec);
        if (usage) {
          base.trace.extra_usage.push({
            source: `judge:${key}`,
            model,
            prompt_tokens: usage.prompt_tokens,
            completion_tokens: usage.completion_tokens,
            cached_input_tokens: 0,
            reasoning_tokens: 0,
            cost: null,
          });
        }
        if (options.parse) rec.parsed = options.parse(text) ?? null;
        return { text, usage };
      };
      return { ...base, judge: entry, complete };
    },
  };
}
