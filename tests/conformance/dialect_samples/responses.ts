/**
 * Samples of the OpenAI Responses dialect for the dialect conformance suite, written here
 * by hand in the shape OpenAI's API documents (not produced by the dialect).
 *
 * @module
 */
import type { DialectSamples } from "../dialect_conformance.ts";

const input = [
  { type: "message", role: "user", content: [{ type: "input_text", text: "What is 2+2?" }] },
];
const tools = [{
  type: "function",
  name: "calc",
  description: "Evaluates an expression",
  parameters: { type: "object", properties: { expr: { type: "string" } } },
  strict: false,
}];

const reasoning = {
  id: "rs_s1",
  type: "reasoning",
  summary: [{ type: "summary_text", text: "Arithmetic: use the tool." }],
};
const message = {
  id: "msg_s1",
  type: "message",
  status: "completed",
  role: "assistant",
  content: [{ type: "output_text", text: "Let me check.", annotations: [] }],
};
const call = {
  id: "fc_s1",
  type: "function_call",
  status: "completed",
  call_id: "call_7",
  name: "calc",
  arguments: '{"expr":"2+2"}',
};
const usage = {
  input_tokens: 30,
  input_tokens_details: { cached_tokens: 10 },
  output_tokens: 12,
  output_tokens_details: { reasoning_tokens: 4 },
  total_tokens: 42,
};
const response = (status: string, output: unknown[], withUsage: boolean) => ({
  id: "resp_s1",
  object: "response",
  created_at: 1_700_000_000,
  status,
  error: null,
  incomplete_details: null,
  instructions: "Be brief.",
  model: "gpt-sample",
  output,
  parallel_tool_calls: true,
  tool_choice: "auto",
  tools,
  usage: withUsage ? usage : null,
});

let seq = 0;
/** One event as OpenAI sends it: an `event:` line naming the type, then its data. */
const event = (type: string, fields: Record<string, unknown>, end = "\n\n") =>
  `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}${end}`;

const stream = [
  event("response.created", { response: response("in_progress", [], false) }),
  event("response.in_progress", { response: response("in_progress", [], false) }),
  event("response.output_item.added", { output_index: 0, item: { ...reasoning, summary: [] } }),
  event("response.reasoning_summary_text.delta", {
    item_id: "rs_s1",
    output_index: 0,
    summary_index: 0,
    delta: "Arithmetic: use the tool.",
  }),
  event("response.output_item.done", { output_index: 0, item: reasoning }),
  event("response.output_item.added", {
    output_index: 1,
    item: { ...message, status: "in_progress", content: [] },
  }),
  event("response.content_part.added", {
    item_id: "msg_s1",
    output_index: 1,
    content_index: 0,
    part: { type: "output_text", text: "", annotations: [] },
  }),
  event("response.output_text.delta", {
    item_id: "msg_s1",
    output_index: 1,
    content_index: 0,
    delta: "Let me ",
    logprobs: [],
  }),
  ": keep-alive comment\n\n",
  event("response.output_text.delta", {
    item_id: "msg_s1",
    output_index: 1,
    content_index: 0,
    delta: "check.",
    logprobs: [],
  }, "\r\n\r\n"),
  event("response.output_text.done", {
    item_id: "msg_s1",
    output_index: 1,
    content_index: 0,
    text: "Let me check.",
    logprobs: [],
  }),
  event("response.output_item.done", { output_index: 1, item: message }),
  event("response.output_item.added", {
    output_index: 2,
    item: { ...call, status: "in_progress", arguments: "" },
  }),
  event("response.function_call_arguments.delta", {
    item_id: "fc_s1",
    output_index: 2,
    delta: '{"expr":',
  }),
  event("response.function_call_arguments.delta", {
    item_id: "fc_s1",
    output_index: 2,
    delta: '"2+2"}',
  }),
  event("response.function_call_arguments.done", {
    item_id: "fc_s1",
    output_index: 2,
    arguments: '{"expr":"2+2"}',
  }),
  event("response.output_item.done", { output_index: 2, item: call }),
  event("response.completed", {
    response: response("completed", [reasoning, message, call], true),
  }),
].join("");

const bash = {
  type: "function",
  name: "bash",
  description: "Runs a shell command",
  parameters: { type: "object", properties: { command: { type: "string" } } },
  strict: false,
};

/** The Responses dialect's samples. */
export const responsesSamples: DialectSamples = {
  request: { model: "gpt-sample", instructions: "Be brief.", input, tools, temperature: 1 },
  streamRequest: { model: "gpt-sample", instructions: "Be brief.", input, tools, stream: true },
  requestMessages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: [{ type: "text", text: "What is 2+2?" }] },
  ],
  response: JSON.stringify(response("completed", [reasoning, message, call], true)),
  stream,
  outcome: {
    message: {
      role: "assistant",
      content: "Let me check.",
      reasoning_content: "Arithmetic: use the tool.",
      tool_calls: [{ id: "call_7", name: "calc", arguments: '{"expr":"2+2"}' }],
      provider_state: [reasoning, message, call],
    },
    finishReason: "tool_calls",
    usage: {
      prompt_tokens: 20,
      completion_tokens: 12,
      cached_input_tokens: 10,
      reasoning_tokens: 4,
      cost: null,
    },
  },
  error: {
    text: JSON.stringify({
      error: {
        message: "Unknown parameter: 'seed'.",
        type: "invalid_request_error",
        param: "seed",
        code: "unknown_parameter",
      },
    }),
    message: "Unknown parameter: 'seed'.",
  },
  contextLengthMessage:
    "Your input exceeds the context window of this model. Please adjust your input and try again.",
  streamError: {
    text: "event: error\n" +
      'data: {"type":"error","code":"server_error","message":"The server had an error.",' +
      '"param":null,"sequence_number":2}\n\n',
    message: "The server had an error.",
  },
  invalidRequests: [null, [], "text", { model: "m", input: 3 }, { input: ["hi"] }],
  tools: [{
    name: "calc",
    description: "Evaluates an expression",
    parameters: { type: "object", properties: { expr: { type: "string" } } },
    strict: false,
  }],
  bashRequest: (stream) => ({
    model: "gpt-sample",
    input: "Say hi in a shell.",
    tools: [bash],
    ...(stream ? { stream: true } : {}),
  }),
};
