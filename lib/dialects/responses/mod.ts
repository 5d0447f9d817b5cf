/**
 * The OpenAI Responses {@link Dialect}: `POST /v1/responses`, JSON or SSE. Request items,
 * the run's overrides and recorded settings are in request.ts, the response object in
 * response.ts, streams in stream.ts, rendered answers in render.ts. Counting input tokens
 * (`/v1/responses/input_tokens`) is relayed to the provider unrecorded. Stored responses
 * (`/v1/responses/<id>`, and with them `previous_response_id`) belong to the provider:
 * their routes are refused here, the field is passed through.
 *
 * @module
 */
import { isRecord } from "../../../kit/util/is_record.ts";
import { errorMessageOf, openAIErrorBody } from "../../../kit/wire/chat.ts";
import type { Dialect, DialectRequest, UpstreamCall } from "../../../kit/wire/dialect.ts";
import { isContextLengthError } from "../context_length.ts";
import { renderResponsesBody, renderResponsesStream } from "./render.ts";
import {
  applyResponsesOverrides,
  messagesOf,
  recordedSampling,
  RESPONSES_PATH,
  toolSpecsOf,
} from "./request.ts";
import { parseResponsesBody, unansweredResponse } from "./response.ts";
import { ResponsesStreamReader } from "./stream.ts";

/** The answer to the Responses API's other routes, which an agent's SDK shows. */
const STORED_UNSUPPORTED =
  "Stored responses (/v1/responses/<id>) are not served here: verifiers-ts records each " +
  "model call as it is made. Create responses with POST /v1/responses.";

/** `POST /v1/responses/input_tokens`: a request's input tokens, counted by the provider. */
const INPUT_TOKENS_PATH = "/v1/responses/input_tokens";

/** The OpenAI Responses dialect. */
export const openAIResponses: Dialect = {
  id: "openai-responses",
  endpoint: RESPONSES_PATH,
  routes: [
    { method: "POST", path: "/v1/responses" },
    // counting a request's input tokens is no model turn: relayed, never recorded
    { method: "POST", path: INPUT_TOKENS_PATH, relay: true },
  ],
  terminalEvent: "response.completed",
  refuse(path) {
    if (!path.startsWith("/v1/responses/") || path === INPUT_TOKENS_PATH) return null;
    return {
      status: 404,
      code: "unsupported_api",
      body: openAIErrorBody(STORED_UNSUPPORTED, "invalid_request_error", "unsupported_api"),
    };
  },
  parseRequest(json): DialectRequest | string {
    if (!isRecord(json)) return "The request body must be a JSON object.";
    const input = json.input;
    if (input !== undefined && typeof input !== "string" && !Array.isArray(input)) {
      return "Invalid type for 'input': expected a string or an array of input items.";
    }
    if (Array.isArray(input) && !input.every(isRecord)) {
      return "Invalid type for 'input': every input item must be an object.";
    }
    return { body: json, messages: messagesOf(json), stream: json.stream === true };
  },
  prepare(request, model, sampling): UpstreamCall {
    const sent = applyResponsesOverrides(request.body, model, sampling);
    return {
      body: sent,
      stream: sent.stream === true,
      sampling: recordedSampling(sent),
      tools: toolSpecsOf(sent.tools),
      // usage is part of a Responses stream's final event: there is no option to ask
      relayUsage: false,
    };
  },
  parseResponse: parseResponsesBody,
  unanswered: unansweredResponse,
  streamReader: () => new ResponsesStreamReader(),
  renderResponse: renderResponsesBody,
  renderStream: renderResponsesStream,
  errorBody: openAIErrorBody,
  errorMessage: (text) => errorMessageOf(text),
  isContextLengthError,
};
