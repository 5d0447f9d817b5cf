/**
 * The two floors of the agent-load benchmark (bench/agent_load.ts), proxies written in the
 * runtime under test with the same sockets as the interception server (`node:http` in
 * front, the HTTP/1.1 transport of lib/clients/http1/ to the provider), so that a ratio
 * against them is the interception's own work, not a transport's:
 *
 * - `pass`: pipes the program's request body to the provider as it came (the key swapped
 *   for the provider's), and the provider's answer back chunk by chunk.
 * - `record`: the least any recording interceptor must do besides: `JSON.parse` the request
 *   body once, impose the model, `JSON.stringify` it once, pipe the answer back unchanged,
 *   and `JSON.parse` the data of each of its server-sent events once.
 *
 * @module
 */
import http from "node:http";
import { ConnectionPool, type Http1Origin } from "../lib/clients/http1/connection_pool.ts";
import { exchange } from "../lib/clients/http1/exchange.ts";
import { requestBytes } from "../lib/clients/http1/request_bytes.ts";
import { closeServer, listenLoopback, readNodeBody } from "../kit/wire/http.ts";

/** Which floor. */
export type FloorKind = "pass" | "record";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Parses the data of each server-sent event once, as the bytes arrive: the least a
 * recorder of a stream reads. Events end with a blank line; their data is their last line.
 */
class EventParser {
  readonly #decoder = new TextDecoder();
  #tail = "";
  /** Events parsed so far. */
  events = 0;

  push(bytes: Uint8Array): void {
    const text = this.#tail + this.#decoder.decode(bytes, { stream: true });
    let at = 0;
    for (;;) {
      const end = text.indexOf("\n\n", at);
      if (end < 0) break;
      const data = text.lastIndexOf("data: ", end);
      if (data >= at) {
        const value = text.slice(data + 6, end);
        if (value !== "[DONE]") JSON.parse(value);
        this.events++;
      }
      at = end + 2;
    }
    this.#tail = at === 0 ? text : text.slice(at);
  }
}

/** A floor proxy on 127.0.0.1 to the provider at `upstream` (its URL without `/v1`). */
export async function startFloor(
  kind: FloorKind,
  upstream: string,
  key: string,
  model: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const base = new URL(upstream);
  const origin: Http1Origin = {
    secure: false,
    hostname: base.hostname,
    port: Number(base.port),
  };
  const pool = new ConnectionPool(120_000);
  const targets = new Map<string, URL>();
  const server = http.createServer(async (req, res) => {
    const raw = await readNodeBody(req, 64 << 20);
    const path = req.url ?? "/";
    let target = targets.get(path);
    if (target === undefined) targets.set(path, target = new URL(path, base));
    const headers: Record<string, string> = {
      "content-type": "application/json",
      "accept-encoding": "identity",
    };
    if (path.startsWith("/v1/messages")) {
      headers["x-api-key"] = key;
      headers["anthropic-version"] = String(req.headers["anthropic-version"] ?? "2023-06-01");
    } else headers["authorization"] = `Bearer ${key}`;
    let payload = raw!;
    if (kind === "record") {
      const body = JSON.parse(decoder.decode(payload));
      body.model = model;
      payload = encoder.encode(JSON.stringify(body));
    }
    const answer = await exchange(pool, origin, requestBytes(target, headers, payload), false)
      .response;
    res.writeHead(answer.status, {
      "content-type": answer.headers["content-type"] ?? "application/json",
      "cache-control": "no-cache",
    });
    const events = kind === "record" ? new EventParser() : null;
    for await (const bytes of answer.body) {
      events?.push(bytes);
      res.write(bytes);
    }
    res.end();
  });
  const url = await listenLoopback(server);
  return {
    url,
    async close() {
      pool.close();
      await closeServer(server);
    },
  };
}
