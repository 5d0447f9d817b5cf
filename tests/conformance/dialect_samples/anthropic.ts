/**
 * Samples of the Anthropic Messages dialect for the dialect conformance suite, written
 * here by hand in the shape Anthropic's API documents (https://docs.anthropic.com/en/api/messages,
 * .../messages-streaming), not produced by the dialect.
 *
 * @module
 */
import type { DialectSamples } from "../dialect_conformance.ts";

const calcSchema = { type: "object", properties: { expr: { type: "string" } } };
const tools = [
  { name: "calc", description: "Evaluates an arithmetic expression", input_schema: calcSchema },
  // a server tool: it runs at the provider and is no tool of the trace
  { type: "web_search_20250305", name: "web_search", max_uses: 1 },
];

const messages = [
  { role: "user", content: "What is 2+2? Use the calculator." },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "Use calc.", signature: "sig-a" },
      { type: "tool_use", id: "toolu_1", name: "calc", input: { expr: "1+1" } },
    ],
  },
  {
    role: "user",
    content: [
      { type: "tool_result", tool_use_id: "toolu_1", content: "2" },
      { type: "text", text: "Now 2+2." },
    ],
  },
];

const request = {
  model: "claude-sample",
  max_tokens: 1024,
  system: [{ type: "text", text: "Be brief." }],
  messages,
  tools,
  temperature: 1,
};

/** One SSE event as the API writes it: its name, then its data. */
const event = (type: string, fields: Record<string, unknown>, end = "\n\n") =>
  `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}${end}`;
const delta = (index: number, d: Record<string, unknown>) =>
  event("content_block_delta", { index, delta: d });

const stream = [
  event("message_start", {
    message: {
      id: "msg_01",
      type: "message",
      role: "assistant",
      model: "claude-sample",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: 20,
        cache_creation_input_tokens: 5,
        cache_read_input_tokens: 10,
        output_tokens: 1,
      },
    },
  }),
  event("content_block_start", {
    index: 0,
    content_block: { type: "thinking", thinking: "", signature: "" },
  }),
  delta(0, { type: "thinking_delta", thinking: "Again " }),
  delta(0, { type: "thinking_delta", thinking: "calc." }),
  delta(0, { type: "signature_delta", signature: "sig-b" }),
  event("content_block_stop", { index: 0 }),
  event("ping", {}),
  event("content_block_start", { index: 1, content_block: { type: "text", text: "" } }),
  delta(1, { type: "text_delta", text: "Let me " }),
  delta(1, { type: "text_delta", text: "check." }),
  event("content_block_stop", { index: 1 }),
  event("content_block_start", {
    index: 2,
    content_block: { type: "tool_use", id: "toolu_2", name: "calc", input: {} },
  }),
  delta(2, { type: "input_json_delta", partial_json: "" }),
  delta(2, { type: "input_json_delta", partial_json: '{"expr": ' }),
  // CRLF line endings on one event
  delta(2, { type: "input_json_delta", partial_json: '"2+2"}' }).replaceAll("\n", "\r\n"),
  event("content_block_stop", { index: 2 }),
  event("message_delta", {
    delta: { stop_reason: "tool_use", stop_sequence: null },
    usage: { output_tokens: 12 },
  }),
  event("message_stop", {}),
].join("");

/** The Anthropic dialect's samples. */
export const anthropicSamples: DialectSamples = {
  request,
  streamRequest: { ...request, temperature: undefined, stream: true },
  requestMessages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "What is 2+2? Use the calculator." },
    {
      role: "assistant",
      content: null,
      reasoning_content: "Use calc.",
      tool_calls: [{ id: "toolu_1", name: "calc", arguments: '{"expr":"1+1"}' }],
      provider_state: [{ type: "thinking", thinking: "Use calc.", signature: "sig-a" }],
    },
    { role: "tool", tool_call_id: "toolu_1", content: "2" },
    { role: "user", content: "Now 2+2." },
  ],
  response: JSON.stringify({
    id: "msg_01",
    type: "message",
    role: "assistant",
    model: "claude-sample",
    content: [
      { type: "thinking", thinking: "Again calc.", signature: "sig-b" },
      { type: "text", text: "Let me check." },
      { type: "tool_use", id: "toolu_2", name: "calc", input: { expr: "2+2" } },
    ],
    stop_reason: "tool_use",
    stop_sequence: null,
    usage: {
      input_tokens: 20,
      cache_creation_input_tokens: 5,
      cache_read_input_tokens: 10,
      output_tokens: 12,
    },
  }),
  stream,
  outcome: {
    message: {
      role: "assistant",
      content: "Let me check.",
      reasoning_content: "Again calc.",
      tool_calls: [{ id: "toolu_2", name: "calc", arguments: '{"expr":"2+2"}' }],
      provider_state: [{ type: "thinking", thinking: "Again calc.", signature: "sig-b" }],
    },
    finishReason: "tool_use",
    usage: {
      prompt_tokens: 25,
      completion_tokens: 12,
      cached_input_tokens: 10,
      reasoning_tokens: null,
      cost: null,
    },
  },
  error: {
    text: JSON.stringify({
      type: "error",
      error: { type: "invalid_request_error", message: "max_tokens: Field required" },
    }),
    message: "max_tokens: Field required",
  },
  contextLengthMessage: "prompt is too long: 210000 tokens > 200000 maximum",
  streamError: {
    text: "event: error\n" +
      'data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    message: "Overloaded",
  },
  invalidRequests: [null, [], "text", { model: "m" }, { messages: "hi" }],
  tools: [{
    name: "calc",
    description: "Evaluates an arithmetic expression",
    parameters: calcSchema,
    strict: null,
  }],
  bashRequest: (stream) => ({
    model: "claude-sample",
    max_tokens: 256,
    messages: [{ role: "user", content: "Say hi in a shell." }],
    tools: [{
      name: "bash",
      description: "Runs a shell command",
      input_schema: { type: "object", properties: { command: { type: "string" } } },
    }],
    ...(stream ? { stream: true } : {}),
  }),
};
