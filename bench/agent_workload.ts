/**
 * The program side of the agent-load benchmark (bench/agent_load.ts): rollouts of an agent
 * that, as Claude Code does, sends the whole conversation again with every model call,
 * streams each answer and appends it and a tool's output to the conversation, in the shape
 * of a model API dialect.
 *
 * @module
 */

/** The workload's size. */
export interface Workload {
  rollouts: number;
  turns: number;
  /** Rollouts in flight. */
  inFlight: number;
  /** SSE events carrying the answer's text, per answer. */
  chunks: number;
  /** Bytes of each answer's text. */
  answerBytes: number;
  /** Bytes of each tool output the program sends back. */
  toolBytes: number;
}

/** How a program speaks one dialect. */
export interface ProgramDialect {
  /** The call's path. */
  path: string;
  headers(key: string): Record<string, string>;
  /** The request body for the conversation so far (`messages` in the dialect's shape). */
  body(conversation: unknown[]): unknown;
  user(text: string): unknown;
  assistant(text: string): unknown;
  /** The text an event's data adds to the answer ("" for none). */
  delta(data: string): string;
}

const SYSTEM = "You are a coding agent. Use the tools to read and edit files. ".repeat(30);

/** The program's dialects, by the ids of lib/dialects/mod.ts. */
export const PROGRAMS: Record<string, ProgramDialect> = {
  chat: {
    path: "/v1/chat/completions",
    headers: (key) => ({ authorization: `Bearer ${key}` }),
    body: (messages) => ({
      model: "agent-model",
      stream: true,
      messages: [{ role: "system", content: SYSTEM }, ...messages],
    }),
    user: (text) => ({ role: "user", content: text }),
    assistant: (text) => ({ role: "assistant", content: text }),
    delta(data) {
      if (data === "[DONE]") return "";
      return JSON.parse(data).choices?.[0]?.delta?.content ?? "";
    },
  },
  anthropic: {
    path: "/v1/messages",
    headers: (key) => ({ "x-api-key": key, "anthropic-version": "2023-06-01" }),
    body: (messages) => ({
      model: "claude-agent",
      max_tokens: 8192,
      stream: true,
      system: [{ type: "text", text: SYSTEM }],
      messages,
    }),
    user: (text) => ({ role: "user", content: [{ type: "text", text }] }),
    assistant: (text) => ({ role: "assistant", content: [{ type: "text", text }] }),
    delta(data) {
      const event = JSON.parse(data);
      return event.type === "content_block_delta" ? event.delta?.text ?? "" : "";
    },
  },
  responses: {
    path: "/v1/responses",
    headers: (key) => ({ authorization: `Bearer ${key}` }),
    body: (input) => ({ model: "gpt-agent", stream: true, instructions: SYSTEM, input }),
    user: (text) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] }),
    assistant: (text) => ({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text }],
    }),
    delta(data) {
      const event = JSON.parse(data);
      return event.type === "response.output_text.delta" ? event.delta ?? "" : "";
    },
  },
};

/** A tool's output of `bytes` bytes, distinct per rollout and turn, ending with a question. */
function toolOutput(rollout: number, turn: number, bytes: number): string {
  const line =
    `src/module_${rollout}_${turn}.ts: export function f${turn}() { return ${rollout}; }\n`;
  const question = `What is ${rollout} + ${turn}?`;
  return line.repeat(Math.max(1, Math.ceil((bytes - question.length) / line.length))) + question;
}

/** Reads a stream of server-sent events; returns the answer's text and the events read. */
async function readAnswer(
  res: Response,
  program: ProgramDialect,
): Promise<{ text: string; events: number }> {
  if (!res.ok || !res.body) throw new Error(`model call failed: ${res.status} ${await res.text()}`);
  const decoder = new TextDecoder();
  let tail = "";
  let text = "";
  let events = 0;
  for await (const bytes of res.body) {
    const chunk = tail + decoder.decode(bytes, { stream: true });
    let at = 0;
    for (;;) {
      const end = chunk.indexOf("\n\n", at);
      if (end < 0) break;
      const data = chunk.lastIndexOf("data: ", end);
      if (data >= at) {
        text += program.delta(chunk.slice(data + 6, end));
        events++;
      }
      at = end + 2;
    }
    tail = chunk.slice(at);
  }
  return { text, events };
}

/** One rollout: `turns` calls to `url` with `key`; returns the final conversation's bytes. */
export async function runRollout(
  url: string,
  key: string,
  program: ProgramDialect,
  rollout: number,
  load: Workload,
): Promise<number> {
  const conversation: unknown[] = [
    program.user(`Fix the failing test of package ${rollout}. ` + toolOutput(rollout, 0, 4000)),
  ];
  const headers = { "content-type": "application/json", ...program.headers(key) };
  for (let turn = 1; turn <= load.turns; turn++) {
    const body = JSON.stringify(program.body(conversation));
    const post = () => fetch(url + program.path, { method: "POST", headers, body });
    // a kept-alive connection the server closed as it was reused is posted again, as SDKs
    // do: nothing was read of it
    const res = await post().catch(post);
    const { text, events } = await readAnswer(res, program);
    if (events < load.chunks) throw new Error(`an answer came in ${events} events`);
    if (!text.endsWith(String(rollout + turn - 1))) throw new Error("a wrong answer");
    conversation.push(program.assistant(text));
    if (turn < load.turns) {
      conversation.push(program.user(toolOutput(rollout, turn, load.toolBytes)));
    }
  }
  return new TextEncoder().encode(JSON.stringify(program.body(conversation))).byteLength;
}
