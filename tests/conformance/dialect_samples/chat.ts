/**
 * Samples of the OpenAI chat completions dialect for the dialect conformance suite,
 * written here by hand in the shape OpenAI's API documents (not produced by the dialect).
 *
 * @module
 */
import type { DialectSamples } from "../dialect_conformance.ts";

const tools = [{
  type: "function",
  function: {
    name: "calc",
    description: "Evaluates an arithmetic expression",
    parameters: { type: "object", properties: { expr: { type: "string" } } },
  },
}];
const bash = {
  type: "function",
  function: {
    name: "bash",
    description: "Runs a shell command",
    parameters: { type: "object", properties: { command: { type: "string" } } },
  },
};

const messages = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "What is 2+2? Use the calculator." },
];

/** One `chat.completion.chunk` event with `fields` (its choices, or usage). */
const event = (fields: Record<string, unknown>, end = "\n\n") =>
  `data: ${
    JSON.stringify({
      id: "chatcmpl-s1",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "gpt-sample",
      ...fields,
    })
  }${end}`;
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  event({ choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });

const stream = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "Let me " }),
  chunk({ content: "check." }),
  chunk({
    tool_calls: [{
      index: 0,
      id: "call_7",
      type: "function",
      function: { name: "calc", arguments: "" },
    }],
  }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '{"expr":' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '"2+2"}' } }] }),
  ": keep-alive comment\n\n",
  chunk({}, "tool_calls"),
  // a usage-only chunk, with CRLF line endings
  event({
    choices: [],
    usage: {
      prompt_tokens: 30,
      completion_tokens: 12,
      total_tokens: 42,
      prompt_tokens_details: { cached_tokens: 10 },
    },
  }, "\r\n\r\n"),
  "data: [DONE]\n\n",
].join("");

/** The chat dialect's samples. */
export const chatSamples: DialectSamples = {
  request: { model: "gpt-sample", messages, tools, temperature: 1 },
  streamRequest: { model: "gpt-sample", messages, tools, stream: true },
  requestMessages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "What is 2+2? Use the calculator." },
  ],
  response: JSON.stringify({
    id: "chatcmpl-s1",
    object: "chat.completion",
    created: 1_700_000_000,
    model: "gpt-sample",
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: "Let me check.",
        refusal: null,
        tool_calls: [{
          id: "call_7",
          type: "function",
          function: { name: "calc", arguments: '{"expr":"2+2"}' },
        }],
      },
      logprobs: null,
      finish_reason: "tool_calls",
    }],
    usage: {
      prompt_tokens: 30,
      completion_tokens: 12,
      total_tokens: 42,
      prompt_tokens_details: { cached_tokens: 10 },
    },
  }),
  stream,
  outcome: {
    message: {
      role: "assistant",
      content: "Let me check.",
      tool_calls: [{ id: "call_7", name: "calc", arguments: '{"expr":"2+2"}' }],
    },
    finishReason: "tool_calls",
    usage: {
      prompt_tokens: 20,
      completion_tokens: 12,
      cached_input_tokens: 10,
      reasoning_tokens: null,
      cost: null,
    },
  },
  error: {
    text: JSON.stringify({
      error: {
        message: "Invalid value for 'temperature'",
        type: "invalid_request_error",
        param: "temperature",
        code: null,
      },
    }),
    message: "Invalid value for 'temperature'",
  },
  contextLengthMessage:
    "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
  streamError: {
    text: 'data: {"error":{"message":"The server had an error","type":"server_error"}}\n\n',
    message: "The server had an error",
  },
  invalidRequests: [null, [], "text", { model: "m" }, { messages: "hi" }],
  tools: [{
    name: "calc",
    description: "Evaluates an arithmetic expression",
    parameters: { type: "object", properties: { expr: { type: "string" } } },
    strict: null,
  }],
  bashRequest: (stream) => ({
    model: "gpt-sample",
    messages: [{ role: "user", content: "Say hi in a shell." }],
    tools: [bash],
    ...(stream ? { stream: true } : {}),
  }),
};
