/**
 * A loopback mock of an OpenAI-compatible chat completions endpoint for benchmarks:
 * `POST /v1/chat/completions` with a bearer token and a JSON body holding `model` and
 * `messages` (and of Anthropic Messages, `POST /v1/messages`: bench/mock_messages.ts, and
 * OpenAI Responses, `POST /v1/responses`: bench/mock_responses.ts); it answers `a + b` questions with their sum (anything else with "ok"),
 * after an optional fixed latency; with `answerPadBytes` every answer is that many bytes of
 * reasoning-like text (no digits) and a newline before the number, as a long agent reply
 * would be. A request with `stream: true` is answered as server-sent
 * events: the answer as `streamChunks` `chat.completion.chunk` events (the first carries the
 * answer, the others one space each; with `splitAnswer`, the answer cut into that many
 * pieces, as a long reply streams), a finish chunk, a usage chunk when
 * `stream_options.include_usage` asks for it, and `data: [DONE]`. No recording: it must
 * stay cheap.
 *
 * As a program it prints its base URL (with `/v1`) on stdout and serves until killed:
 * `deno run -A bench/mock_server.ts [--latency-ms N] [--stream-chunks 500]
 * [--answer-pad-bytes 0] [--split-answer]`.
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import process from "node:process";
import { checkMessagesRequest, messagesText, sendMessages } from "./mock_messages.ts";
import { answerDeltas, paceEvents } from "./mock_pacing.ts";
import { checkResponsesRequest, lastInputText, sendResponses } from "./mock_responses.ts";

/** A running mock. */
export interface MockServer {
  /** Base URL including `/v1`. */
  url: string;
  /** Requests answered so far. */
  served(): number;
  close(): Promise<void>;
}

function answer(content: string): string {
  const m = /(-?\d+)\s*\+\s*(-?\d+)/.exec(content);
  return m ? String(Number(m[1]) + Number(m[2])) : "ok";
}

/** Text with no digit, escapes included, as a model's reasoning before its answer. */
const REASONING = 'First I read the question again. The "sum" is what I need: I add the ' +
  "ones, carry when they pass nine, then the tens.\nChecking it once more gives the same.\n";

/** `bytes` bytes of {@link REASONING} repeated (0: none). */
export function reasoningPad(bytes: number): string {
  if (bytes <= 0) return "";
  return REASONING.repeat(Math.ceil(bytes / REASONING.length)).slice(0, bytes);
}

function send(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(body);
}

/** Writes the answer as chat chunks (plus finish, optional usage and `[DONE]`), paced. */
function sendStream(
  res: http.ServerResponse,
  id: string,
  model: string,
  deltas: string[],
  usage: boolean,
): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":1700000000,` +
    `"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":`;
  const space = `${head}{"content":" "},"logprobs":null,"finish_reason":null}]}\n\n`;
  const events = deltas.map((text, i) =>
    i === 0
      ? `${head}{"role":"assistant","content":${JSON.stringify(text)}},` +
        `"logprobs":null,"finish_reason":null}]}\n\n`
      : text === " "
      ? space
      : `${head}{"content":${JSON.stringify(text)}},"logprobs":null,"finish_reason":null}]}\n\n`
  );
  events.push(`${head}{},"logprobs":null,"finish_reason":"stop"}]}\n\n`);
  if (usage) {
    events.push(
      `data: {"id":"${id}","object":"chat.completion.chunk","created":1700000000,` +
        `"model":${JSON.stringify(model)},"choices":[],` +
        `"usage":{"prompt_tokens":20,"completion_tokens":${deltas.length},` +
        `"total_tokens":${20 + deltas.length}}}\n\n`,
    );
  }
  events.push("data: [DONE]\n\n");
  let at = 0;
  paceEvents(res, () => events[at++] ?? null);
}

/** Starts the mock on 127.0.0.1 (OS-chosen port). */
export async function startMockServer(
  options: {
    latencyMs?: number;
    streamChunks?: number;
    answerPadBytes?: number;
    splitAnswer?: boolean;
  } = {},
): Promise<MockServer> {
  const latency = options.latencyMs ?? 0;
  const pad = reasoningPad(options.answerPadBytes ?? 0);
  const streamChunks = options.streamChunks ?? 500;
  const split = options.splitAnswer === true;
  const later = (go: () => void) => latency > 0 ? void setTimeout(go, latency) : go();
  let served = 0;
  let created = 1_700_000_000;
  const server = http.createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => {
      if (req.method === "POST" && req.url === "/v1/messages") {
        const body = checkMessagesRequest(req, res, text);
        if (body === null) return;
        const sum = answer(messagesText(body.messages.at(-1)?.content));
        const deltas = answerDeltas(pad ? `${pad}\n${sum}` : sum, streamChunks, split);
        const id = `msg_mock_${served++}`;
        return later(() => sendMessages(res, id, body.model, deltas, body.stream === true));
      }
      if (req.method === "POST" && req.url === "/v1/responses") {
        const body = checkResponsesRequest(req, res, text);
        if (body === null) return;
        const sum = answer(lastInputText(body.input));
        const deltas = answerDeltas(pad ? `${pad}\n${sum}` : sum, streamChunks, split);
        const id = `resp_mock_${served++}`;
        return later(() => sendResponses(res, id, body.model, deltas, body.stream === true));
      }
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        return send(res, 404, '{"error":{"message":"not found","type":"invalid_request_error"}}');
      }
      if (!/^Bearer .+/.test(req.headers.authorization ?? "")) {
        return send(res, 401, '{"error":{"message":"no API key","type":"invalid_request_error"}}');
      }
      let body: {
        model?: unknown;
        messages?: { content?: unknown }[];
        stream?: unknown;
        stream_options?: { include_usage?: unknown };
      };
      try {
        body = JSON.parse(text);
      } catch {
        return send(res, 400, '{"error":{"message":"bad JSON","type":"invalid_request_error"}}');
      }
      if (typeof body.model !== "string" || !Array.isArray(body.messages)) {
        return send(
          res,
          400,
          '{"error":{"message":"model and messages are required","type":"invalid_request_error"}}',
        );
      }
      const last = body.messages.at(-1)?.content;
      const sum = answer(typeof last === "string" ? last : "");
      const content = pad ? `${pad}\n${sum}` : sum;
      if (body.stream === true) {
        const usage = body.stream_options?.include_usage === true;
        const id = `chatcmpl-mock-${served++}`;
        const deltas = answerDeltas(content, streamChunks, split);
        return later(() => sendStream(res, id, body.model as string, deltas, usage));
      }
      const reply = JSON.stringify({
        id: `chatcmpl-mock-${served}`,
        object: "chat.completion",
        created: created++,
        model: body.model,
        choices: [{
          index: 0,
          message: { role: "assistant", content, refusal: null },
          logprobs: null,
          finish_reason: "stop",
        }],
        usage: { prompt_tokens: 20, completion_tokens: 2, total_tokens: 22 },
      });
      served++;
      later(() => send(res, 200, reply));
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    served: () => served,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
      }),
  };
}

if (import.meta.main) {
  const arg = (name: string, fallback: number) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? Number(process.argv[i + 1]) : fallback;
  };
  const mock = await startMockServer({
    latencyMs: arg("--latency-ms", 0),
    streamChunks: arg("--stream-chunks", 500),
    answerPadBytes: arg("--answer-pad-bytes", 0),
    splitAnswer: process.argv.includes("--split-answer"),
  });
  process.stdout.write(mock.url + "\n");
}
