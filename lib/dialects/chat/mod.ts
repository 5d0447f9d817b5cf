/**
 * The OpenAI chat completions {@link Dialect}: `POST /v1/chat/completions` (JSON or SSE),
 * and `GET /v1/models` and `GET /v1/models/<id>` answered with the run's model.
 *
 * @module
 */
import { isRecord } from "../../../kit/util/is_record.ts";
import {
  CHAT_COMPLETIONS_PATH,
  type ChatRequestBody,
  errorMessageOf,
  openAIErrorBody,
  toChatMessages,
} from "../../../kit/wire/chat.ts";
import type {
  Dialect,
  DialectAnswer,
  DialectRequest,
  UpstreamCall,
} from "../../../kit/wire/dialect.ts";
import {
  applyChatOverrides,
  chatToMessage,
  outcomeFromCompletion,
  recordedSampling,
  toolSpecsFromChat,
} from "./codec.ts";
import { isContextLengthError } from "../context_length.ts";
import { renderChatCompletion, renderChatStream } from "./render.ts";
import { ChatStreamReader } from "./stream.ts";
import { chatBodyFromNeutral } from "./neutral.ts";

function modelCard(model: string) {
  return { id: model, object: "model", created: 0, owned_by: "verifiers-ts" };
}

/** `GET /v1/models/<id>`: the run's model; any other id is `model_not_found`. */
function modelById(path: string, model: string): DialectAnswer {
  let id = path.slice("/v1/models/".length);
  try {
    id = decodeURIComponent(id);
  } catch {
    // a malformed escape is just another unknown id
  }
  if (id === model) return { status: 200, body: modelCard(model) };
  return {
    status: 404,
    code: "model_not_found",
    body: openAIErrorBody(
      `The model '${id.slice(0, 200)}' does not exist here; this run's model is '${model}'`,
      "invalid_request_error",
      "model_not_found",
    ),
  };
}

/** The OpenAI chat completions dialect. */
export const openAIChat: Dialect = {
  id: "openai-chat",
  endpoint: CHAT_COMPLETIONS_PATH,
  routes: [
    { method: "POST", path: "/v1/chat/completions" },
    {
      method: "GET",
      path: "/v1/models",
      answer: (_path, model) => ({
        status: 200,
        body: { object: "list", data: [modelCard(model)] },
      }),
    },
    { method: "GET", path: "/v1/models/", answer: modelById },
  ],
  parseRequest(json): DialectRequest | string {
    if (!isRecord(json) || !Array.isArray(json.messages)) {
      return "'messages' is a required property";
    }
    const body = json as ChatRequestBody;
    return { body, messages: body.messages.map(chatToMessage), stream: body.stream === true };
  },
  rewriteRequest(request, messages): DialectRequest | string {
    const body = request.body as ChatRequestBody;
    if (messages.length !== body.messages.length) return "the rewrite changed the message count";
    // only the rewritten messages are said again; the others keep the program's own fields
    const rewritten = body.messages.map((raw, i) =>
      messages[i] === request.messages[i] ? raw : toChatMessages([messages[i]!])[0]!
    );
    return { ...request, body: { ...body, messages: rewritten }, messages };
  },
  prepare(request, model, sampling, options): UpstreamCall {
    const sent = applyChatOverrides(request.body as ChatRequestBody, model, sampling);
    const streaming = sent.stream === true;
    const programOptions = isRecord(sent.stream_options) ? sent.stream_options : {};
    if (streaming && options.streamUsage) {
      sent.stream_options = { ...programOptions, include_usage: true };
    } else if (streaming) delete sent.stream_options;
    return {
      body: sent,
      stream: streaming,
      sampling: recordedSampling(sent, sampling),
      tools: Array.isArray(sent.tools) ? toolSpecsFromChat(sent.tools) : null,
      relayUsage: streaming && programOptions.include_usage === true,
    };
  },
  prepareNeutral(request, model, sampling, options): UpstreamCall | string {
    const body = chatBodyFromNeutral(request);
    if (typeof body === "string") return body;
    const own = { body, messages: request.messages, stream: request.stream };
    return openAIChat.prepare(own, model, sampling, options);
  },
  refusedStreamUsage: (status, text) =>
    status === 400 && /stream_options|include_usage/i.test(text),
  withoutStreamUsage(call) {
    const { stream_options: _dropped, ...body } = call.body;
    return { ...call, body };
  },
  parseResponse: outcomeFromCompletion,
  streamReader: (relayUsage, onDelta) => new ChatStreamReader(relayUsage, onDelta),
  renderResponse: renderChatCompletion,
  renderStream: renderChatStream,
  errorBody: openAIErrorBody,
  errorMessage: (text) => errorMessageOf(text),
  isContextLengthError,
};
