/**
 * A loopback mock of an OpenAI-compatible chat completions endpoint for benchmarks:
 * `POST /v1/chat/completions` with a bearer token and a JSON body holding `model` and
 * `messages`; it answers `a + b` questions with their sum (anything else with "ok"),
 * after an optional fixed latency; with `answerPadBytes` every answer is that many bytes of
 * reasoning-like text (no digits) and a newline before the number, as a long agent reply
 * would be. A request with `stream: true` is answered as server-sent
 * events: the answer as `streamChunks` `chat.completion.chunk` events (the first carries the
 * answer, the others one space each), a finish chunk, a usage chunk when
 * `stream_options.include_usage` asks for it, and `data: [DONE]`. No recording: it must
 * stay cheap.
 *
 * As a program it prints its base URL (with `/v1`) on stdout and serves until killed:
 * `deno run -A bench/mock_server.ts [--latency-ms N] [--stream-chunks 500]
 * [--answer-pad-bytes 0]`.
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import process from "node:process";

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

/**
 * Writes the answer as `chunks` SSE events (plus finish, optional usage and `[DONE]`), one
 * event per turn of the event loop, so that events arrive apart as a model's tokens do
 * rather than as one burst.
 */
function sendStream(
  res: http.ServerResponse,
  id: string,
  model: string,
  content: string,
  chunks: number,
  usage: boolean,
): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const head = `data: {"id":"${id}","object":"chat.completion.chunk","created":1700000000,` +
    `"model":${JSON.stringify(model)},"choices":[{"index":0,"delta":`;
  const space = `${head}{"content":" "},"logprobs":null,"finish_reason":null}]}\n\n`;
  let sent = 0;
  const next = () => {
    if (res.destroyed) return;
    if (sent === 0) {
      res.write(
        `${head}{"role":"assistant","content":${JSON.stringify(content)}},` +
          `"logprobs":null,"finish_reason":null}]}\n\n`,
      );
    } else if (sent < chunks) {
      res.write(space);
    } else {
      res.write(`${head}{},"logprobs":null,"finish_reason":"stop"}]}\n\n`);
      if (usage) {
        res.write(
          `data: {"id":"${id}","object":"chat.completion.chunk","created":1700000000,` +
            `"model":${JSON.stringify(model)},"choices":[],` +
            `"usage":{"prompt_tokens":20,"completion_tokens":${chunks},` +
            `"total_tokens":${20 + chunks}}}\n\n`,
        );
      }
      res.end("data: [DONE]\n\n");
      return;
    }
    sent++;
    setImmediate(next);
  };
  next();
}

/** Starts the mock on 127.0.0.1 (OS-chosen port). */
export async function startMockServer(
  options: { latencyMs?: number; streamChunks?: number; answerPadBytes?: number } = {},
): Promise<MockServer> {
  const latency = options.latencyMs ?? 0;
  const pad = reasoningPad(options.answerPadBytes ?? 0);
  const streamChunks = options.streamChunks ?? 500;
  let served = 0;
  let created = 1_700_000_000;
  const server = http.createServer((req, res) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (text += c));
    req.on("end", () => {
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
        const go = () => sendStream(res, id, body.model as string, content, streamChunks, usage);
        if (latency > 0) setTimeout(go, latency);
        else go();
        return;
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
      if (latency > 0) setTimeout(() => send(res, 200, reply), latency);
      else send(res, 200, reply);
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
  });
  process.stdout.write(mock.url + "\n");
}
