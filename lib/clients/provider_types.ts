/**
 * What a model provider is to the engine: one request (path, JSON body, headers, signal)
 * and its answer, read in full (JSON) or as a stream of bytes (server-sent events). The
 * HTTP client (provider_client.ts) and the in-process oracle implement it.
 *
 * @module
 */

/** One request to the provider. */
export interface ProviderRequest {
  /** Path under the base URL. @default "/chat/completions" */
  path?: string;
  /** JSON body (serialised) or raw bytes. */
  body: unknown;
  /** Headers of this request (below the client's own headers and auth). */
  headers?: Record<string, string>;
  /** The auth headers for the client's key. @default `authorization: Bearer <key>` */
  auth?: ((key: string) => Record<string, string>) | undefined;
  /** Cancels the request and its body stream. */
  signal?: AbortSignal;
}

/** A JSON (or other non-stream) response, read in full. */
export interface ProviderJsonResponse {
  kind: "json";
  status: number;
  headers: Record<string, string>;
  /** The body text as received. */
  text: string;
  /** The parsed body; null when the body is not JSON (only possible on error statuses). */
  json: unknown;
}

/** A `text/event-stream` response; iterate `body` to read it. */
export interface ProviderStreamResponse {
  kind: "stream";
  status: number;
  headers: Record<string, string>;
  /** The raw body bytes; a transport failure while reading throws a ProviderError (503). */
  body: AsyncIterable<Uint8Array>;
  /** Stops reading and drops the connection. */
  cancel(): void;
}

/** What the provider answered. */
export type ProviderResponse = ProviderJsonResponse | ProviderStreamResponse;

/** A client for one OpenAI-compatible provider. */
export interface ProviderClient {
  /** The base URL requests are joined to. */
  readonly baseUrl: string;
  /** Sends one request; no retries. */
  send(request: ProviderRequest): Promise<ProviderResponse>;
  /** `send` to `/chat/completions`. */
  chatCompletions(
    body: unknown,
    options?: Omit<ProviderRequest, "body" | "path">,
  ): Promise<ProviderResponse>;
  /** Drops pooled connections. */
  close(): void;
}
