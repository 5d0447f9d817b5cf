/**
 * The Anthropic Messages {@link Dialect}: `POST /v1/messages` (JSON or SSE) and
 * `POST /v1/messages/count_tokens`, relayed to the provider and never recorded. Upstream
 * the key goes as `x-api-key` with an `anthropic-version` (the program's own version, when
 * it sends one, wins); errors take Anthropic's shape, `{type: "error", error: {...}}`.
 *
 * @module
 */
import { isRecord } from "../../../kit/util/is_record.ts";
import { errorMessageOf } from "../../../kit/wire/chat.ts";
import type { Dialect, DialectRequest, UpstreamCall } from "../../../kit/wire/dialect.ts";
import { isContextLengthError } from "../context_length.ts";
import {
  anthropicErrorBody,
  applyOverrides,
  normalizeStopReason,
  outcomeFromMessage,
  parseMessages,
  recordedSampling,
  toolSpecs,
} from "./codec.ts";
import { renderMessage, renderMessageStream } from "./render.ts";
import { AnthropicStreamReader } from "./stream.ts";

/** The API version sent upstream when the program names none. */
export const ANTHROPIC_VERSION = "2023-06-01";

/** The Anthropic Messages dialect. */
export const anthropicMessages: Dialect = {
  id: "anthropic",
  endpoint: "/v1/messages",
  routes: [
    { method: "POST", path: "/v1/messages" },
    { method: "POST", path: "/v1/messages/count_tokens", relay: true },
  ],
  terminalEvent: "event: message_stop",
  upstreamAuth: (key) => ({ "x-api-key": key }),
  upstreamHeaders: { "anthropic-version": ANTHROPIC_VERSION },
  finishReason: normalizeStopReason,
  parseRequest(json): DialectRequest | string {
    if (!isRecord(json)) return "the body must be a JSON object";
    if (!Array.isArray(json.messages)) return "messages: Field required";
    return {
      body: json,
      messages: parseMessages(json, json.messages),
      stream: json.stream === true,
    };
  },
  prepare(request, model, sampling): UpstreamCall {
    const sent = applyOverrides(request.body, model, sampling);
    return {
      body: sent,
      stream: sent.stream === true,
      sampling: recordedSampling(sent),
      tools: Array.isArray(sent.tools) ? toolSpecs(sent.tools) : null,
      // the API reports usage on every stream; there is no option to ask for it
      relayUsage: true,
    };
  },
  parseResponse: outcomeFromMessage,
  streamReader: () => new AnthropicStreamReader(),
  renderResponse: renderMessage,
  renderStream: renderMessageStream,
  errorBody: anthropicErrorBody,
  errorMessage: (text) => errorMessageOf(text),
  isContextLengthError,
};
