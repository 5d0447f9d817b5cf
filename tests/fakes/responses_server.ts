/**
 * A scripted, strict OpenAI Responses server on 127.0.0.1 for tests, and a strict reader
 * of Responses event streams. Neither shares code with the dialect under test.
 *
 * ```ts
 * const fake = await startFakeResponses({
 *   apiKey: "sk-test",
 *   script: (body, i) =>
 *     i === 0 ? { calls: [{ name: "bash", arguments: { command: "ls" } }] } : "done",
 * });
 * // point a client at fake.url (it includes /v1), then inspect fake.requests
 * await fake.close();
 * ```
 *
 * It serves `POST /v1/responses` (and `POST /v1/responses/input_tokens`, which counts
 * about four characters a token) and rejects what the API rejects, in its error shape:
 * a missing or wrong bearer token (401; an `x-api-key` header is no bearer token), a
 * non-JSON body, an unknown top-level parameter (`Unknown parameter: 'seed'.`), a missing
 * `model`, an `input` that is neither a string nor items, an item of an unknown type or
 * role, a `function_call_output` whose `call_id` no earlier `function_call` has, a
 * `max_output_tokens` below 16, out-of-range `temperature`/`top_p`, malformed `tools`, a
 * non-boolean `stream` and `stream_options` without `stream: true`. A stream is written
 * as the API writes it: `event:` and `data:` lines, sequence numbers from 0.
 *
 * @module
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { checkRequest, COUNT_PARAMETERS } from "./responses_request_rules.ts";
import { answerEvents, answerObject, type FakeAnswer } from "./responses_answer.ts";

export type { FakeAnswer } from "./responses_answer.ts";
export { readResponsesStream } from "./responses_stream_reader.ts";

/** What the fake answers to one request: an answer, a text, or a fault. */
export type FakeResponsesReply =
  | string
  | FakeAnswer & {
    /** HTTP status of an error reply (with `error`). */
    status?: number;
    error?: { message: string; type?: string; code?: string | null };
    /** Close the connection without answering. */
    drop?: boolean;
    /** Streaming only: close the connection after this many events. */
    dropAfterEvents?: number;
    /** Streaming only: end the response cleanly after this many events. */
    endAfterEvents?: number;
  };

/** One request the fake accepted as JSON (valid or not). */
export interface FakeResponsesRequest {
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A running fake. */
export interface FakeResponses {
  /** Base URL including `/v1`. */
  readonly url: string;
  /** Every request whose body parsed as JSON, in order. */
  readonly requests: FakeResponsesRequest[];
  /** Every `POST /v1/responses/input_tokens` whose body parsed as JSON, in order. */
  readonly counts: FakeResponsesRequest[];
  close(): Promise<void>;
}

/** Options of {@link startFakeResponses}. */
export interface FakeResponsesOptions {
  /** The only bearer token accepted. @default "sk-fake-responses" */
  apiKey?: string;
  /** The answer to the i-th valid request (0-based). */
  script: (
    body: Record<string, unknown>,
    index: number,
  ) => FakeResponsesReply | Promise<FakeResponsesReply>;
}

function errorBody(message: string, type: string, param: string | null, code: string | null) {
  return { error: { message, type, param, code } };
}

/** Starts the fake on 127.0.0.1 (OS-chosen port). */
export async function startFakeResponses(options: FakeResponsesOptions): Promise<FakeResponses> {
  const apiKey = options.apiKey ?? "sk-fake-responses";
  const requests: FakeResponsesRequest[] = [];
  const counts: FakeResponsesRequest[] = [];
  let valid = 0;
  let ids = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const invalid = (message: string, param: string | null = null, code: string | null = null) =>
        send(400, errorBody(message, "invalid_request_error", param, code));
      const counting = req.url === "/v1/responses/input_tokens";
      if (req.url !== "/v1/responses" && !counting) {
        return send(
          404,
          errorBody(`Invalid URL (${req.method} ${req.url})`, "invalid_request_error", null, null),
        );
      }
      if (req.method !== "POST") {
        return send(
          405,
          errorBody(`Method ${req.method} not allowed`, "invalid_request_error", null, null),
        );
      }
      const auth = req.headers.authorization;
      if (auth === undefined) {
        return send(
          401,
          errorBody(
            "You didn't provide an API key. You need to provide your API key in an " +
              "Authorization header using Bearer auth.",
            "invalid_request_error",
            null,
            null,
          ),
        );
      }
      if (auth !== `Bearer ${apiKey}`) {
        return send(
          401,
          errorBody(
            "Incorrect API key provided.",
            "invalid_request_error",
            null,
            "invalid_api_key",
          ),
        );
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return invalid("We could not parse the JSON body of your request.");
      }
      if (typeof body !== "object" || body === null || Array.isArray(body)) {
        return invalid("The request body must be a JSON object.");
      }
      const record = body as Record<string, unknown>;
      if (counting) {
        counts.push({ headers: req.headers, body: record });
        const problem = checkRequest(record, COUNT_PARAMETERS);
        if (problem) return invalid(problem.message, problem.param, problem.code);
        const tokens = Math.max(1, Math.ceil(JSON.stringify(record.input ?? "").length / 4));
        return send(200, { object: "response.input_tokens", input_tokens: tokens });
      }
      requests.push({ headers: req.headers, body: record });
      const problem = checkRequest(record);
      if (problem) return invalid(problem.message, problem.param, problem.code);
      const reply = await options.script(record, valid++);
      const answer: FakeResponsesReply = typeof reply === "string" ? { text: reply } : reply;
      if (answer.drop) return req.socket.destroy();
      if (answer.error || (answer.status ?? 200) >= 400) {
        const e = answer.error ?? { message: "error" };
        const status = answer.status ?? 500;
        const type = e.type ?? (status >= 500 ? "server_error" : "invalid_request_error");
        return send(status, errorBody(e.message, type, null, e.code ?? null));
      }
      const id = `resp_fake_${++ids}`;
      const model = record.model as string;
      if (record.stream !== true) return send(200, answerObject(answer, id, model, record));
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      const events = answerEvents(answer, id, model, record);
      const upTo = answer.dropAfterEvents ?? events.length;
      for (const [i, event] of events.entries()) {
        if (i >= upTo) return req.socket.destroy();
        if (i >= (answer.endAfterEvents ?? events.length)) break;
        res.write(event);
        // let some events travel in separate reads
        if (i % 4 === 3) await new Promise((r) => setImmediate(r));
      }
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    counts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
