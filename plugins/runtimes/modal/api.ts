/**
 * The Modal control-plane client (`modal.client.ModalClient`) on our gRPC transport, with
 * the metadata, auth-token manager and unary retry rules of the official JS SDK
 * (`modal@0.7.2`): every call carries the client type/version headers and the token pair; every call
 * but `AuthTokenGet` also carries `x-modal-auth-token`; unary calls are retried up to 3 times
 * (100 ms, x2, at most 1 s) on DEADLINE_EXCEEDED, UNAVAILABLE, CANCELLED, INTERNAL and
 * UNKNOWN, with one `x-idempotency-key` per logical call and `x-retry-attempt` 0, 1, ...
 *
 * @module
 */
import { randomUUID } from "node:crypto";
import { MissingCredentialsError, SandboxError, sleep, VERSION } from "../../../kit/mod.ts";
import { GrpcChannel, GrpcError, Status } from "./grpc.ts";
import type { CallOptions } from "./grpc.ts";
import * as M from "./messages.ts";
import type { MessageType } from "../../../kit/mod.ts";
import type { ModalProfile } from "./profile.ts";

/** `x-modal-client-type` of libmodal JS (`CLIENT_TYPE_LIBMODAL_JS`). */
const CLIENT_TYPE = "8";
/** `x-modal-client-version`: the Python SDK version libmodal says it behaves like. */
const CLIENT_VERSION = "1.0.0";
/** The libmodal version whose behaviour this client mirrors. */
const LIBMODAL_VERSION = "modal-js/0.7.2";

/** gRPC codes the SDKs treat as transient. */
const RETRYABLE_CODES: ReadonlySet<number> = new Set([
  Status.DEADLINE_EXCEEDED,
  Status.UNAVAILABLE,
  Status.CANCELLED,
  Status.INTERNAL,
  Status.UNKNOWN,
]);

/** True for a GrpcError with a transient code. */
export function isTransientGrpc(e: unknown): boolean {
  return e instanceof GrpcError && RETRYABLE_CODES.has(e.code);
}

/** Refresh the auth token when it expires within this many seconds. */
const REFRESH_WINDOW_S = 5 * 60;
/** Assumed lifetime of a token without an `exp` claim. */
const DEFAULT_EXPIRY_S = 20 * 60;

/** Options of a unary control-plane call. */
export interface UnaryOptions {
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
  /** Retries on transient codes. @default 3 */
  retries?: number;
}

/** Reads the `exp` claim (seconds) of a JWT, or 0. */
export function jwtExpiry(token: string): number {
  const parts = token.split(".");
  if (parts.length !== 3) return 0;
  try {
    let payload = parts[1]!.replace(/-/g, "+").replace(/_/g, "/");
    while (payload.length % 4 !== 0) payload += "=";
    const claims = JSON.parse(atob(payload)) as { exp?: unknown };
    return typeof claims.exp === "number" ? claims.exp : 0;
  } catch {
    return 0;
  }
}

/** The control-plane client. One per process and profile is enough (see {@link sharedModalApi}). */
export class ModalApi {
  readonly profile: ModalProfile;
  readonly #channel: GrpcChannel;
  #token = "";
  #tokenExpiry = 0;
  #refreshing: Promise<void> | null = null;

  constructor(profile: ModalProfile) {
    this.profile = profile;
    this.#channel = new GrpcChannel(profile.serverUrl, {
      userAgent: `verifiers-ts/${VERSION}`,
    });
  }

  /** Closes the connection. */
  close(): void {
    this.#channel.close();
  }

  #baseMetadata(): Record<string, string> {
    const { tokenId, tokenSecret } = this.profile;
    if (!tokenId || !tokenSecret) {
      throw new MissingCredentialsError("modal credentials are missing", {
        hint:
          "Set MODAL_TOKEN_ID and MODAL_TOKEN_SECRET (or token_id/token_secret in ~/.modal.toml)",
      });
    }
    return {
      "x-modal-client-type": CLIENT_TYPE,
      "x-modal-client-version": CLIENT_VERSION,
      "x-modal-libmodal-version": LIBMODAL_VERSION,
      "x-modal-token-id": tokenId,
      "x-modal-token-secret": tokenSecret,
    };
  }

  async #authToken(signal?: AbortSignal): Promise<string> {
    const now = Date.now() / 1000;
    if (this.#token !== "" && now < this.#tokenExpiry - REFRESH_WINDOW_S) return this.#token;
    if (this.#token !== "" && now < this.#tokenExpiry && this.#refreshing !== null) {
      return this.#token; // keep using the current token while someone refreshes it
    }
    if (this.#refreshing === null) {
      this.#refreshing = (async () => {
        try {
          const res = await this.#unaryRaw(
            "AuthTokenGet",
            M.AuthTokenGetRequest,
            M.AuthTokenGetResponse,
            {},
            { signal },
            false,
          );
          if (!res.token) {
            throw new SandboxError("modal AuthTokenGet returned no token", {
              hint: "The server did not issue an auth token; check the server URL",
            });
          }
          this.#token = res.token;
          const exp = jwtExpiry(res.token);
          this.#tokenExpiry = exp > 0 ? exp : Math.floor(Date.now() / 1000) + DEFAULT_EXPIRY_S;
        } finally {
          this.#refreshing = null;
        }
      })();
    }
    const pending = this.#refreshing;
    try {
      await pending;
    } catch (e) {
      // A failed background refresh is fine while the old token is still valid.
      if (this.#token !== "" && Date.now() / 1000 < this.#tokenExpiry) return this.#token;
      throw e;
    }
    return this.#token;
  }

  async #unaryRaw<Req extends object, Res extends object>(
    method: string,
    reqType: MessageType<Req>,
    resType: MessageType<Res>,
    request: Partial<Req>,
    options: UnaryOptions,
    withAuthToken: boolean,
  ): Promise<Res> {
    const path = M.CONTROL_SERVICE + method;
    const body = reqType.encode(request);
    const retries = options.retries ?? 3;
    const idempotencyKey = randomUUID();
    const started = Date.now();
    let delay = 100;
    for (let attempt = 0;; attempt++) {
      const metadata = this.#baseMetadata();
      if (withAuthToken) metadata["x-modal-auth-token"] = await this.#authToken(options.signal);
      metadata["x-idempotency-key"] = idempotencyKey;
      metadata["x-retry-attempt"] = String(attempt);
      if (attempt > 0) metadata["x-retry-delay"] = ((Date.now() - started) / 1000).toFixed(3);
      const call: CallOptions = { metadata, timeoutMs: options.timeoutMs, signal: options.signal };
      try {
        return resType.decode(await this.#channel.unary(path, body, call));
      } catch (e) {
        if (!isTransientGrpc(e) || attempt >= retries || options.signal?.aborted) throw e;
        await sleep(delay, options.signal);
        delay = Math.min(delay * 2, 1000);
      }
    }
  }

  /** A unary control-plane call with the SDK's metadata and retries. */
  unary<Req extends object, Res extends object>(
    method: string,
    reqType: MessageType<Req>,
    resType: MessageType<Res>,
    request: Partial<Req>,
    options: UnaryOptions = {},
  ): Promise<Res> {
    return this.#unaryRaw(method, reqType, resType, request, options, true);
  }

  /** A server-streaming control-plane call (never retried here; callers resume). */
  async *stream<Req extends object, Res extends object>(
    method: string,
    reqType: MessageType<Req>,
    resType: MessageType<Res>,
    request: Partial<Req>,
    options: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined } = {},
  ): AsyncGenerator<Res> {
    const metadata = this.#baseMetadata();
    metadata["x-modal-auth-token"] = await this.#authToken(options.signal);
    const call = this.#channel.serverStream(M.CONTROL_SERVICE + method, reqType.encode(request), {
      metadata,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    for await (const bytes of call) yield resType.decode(bytes);
  }

  /** `AppGetOrCreate` → app id. */
  async appGetOrCreate(
    appName: string,
    createIfMissing: boolean,
    signal?: AbortSignal,
  ): Promise<string> {
    const res = await this.unary(
      "AppGetOrCreate",
      M.AppGetOrCreateRequest,
      M.AppGetOrCreateResponse,
      {
        appName,
        environmentName: this.profile.environment,
        objectCreationType: createIfMissing
          ? M.ObjectCreationType.CREATE_IF_MISSING
          : M.ObjectCreationType.UNSPECIFIED,
      },
      { signal },
    );
    return res.appId;
  }

  /** `SecretGetOrCreate` of an ephemeral secret holding `env` → secret id. */
  async ephemeralSecret(env: Record<string, string>, signal?: AbortSignal): Promise<string> {
    const res = await this.unary(
      "SecretGetOrCreate",
      M.SecretGetOrCreateRequest,
      M.SecretGetOrCreateResponse,
      {
        objectCreationType: M.ObjectCreationType.EPHEMERAL,
        envDict: env,
        environmentName: this.profile.environment,
      },
      { signal },
    );
    return res.secretId;
  }

  /** `SandboxTerminate`. */
  async sandboxTerminate(sandboxId: string): Promise<M.SandboxTerminateResponse> {
    return await this.unary(
      "SandboxTerminate",
      M.SandboxTerminateRequest,
      M.SandboxTerminateResponse,
      { sandboxId },
    );
  }

  /** `SandboxWait{timeout}` → the result once the sandbox finished, else undefined. */
  async sandboxWait(
    sandboxId: string,
    timeoutS: number,
    signal?: AbortSignal,
  ): Promise<M.GenericResult | undefined> {
    const res = await this.unary(
      "SandboxWait",
      M.SandboxWaitRequest,
      M.SandboxWaitResponse,
      { sandboxId, timeout: timeoutS },
      { signal },
    );
    return res.result;
  }

  /** `SandboxGetTaskId` → `{taskId, taskResult}`. */
  async sandboxGetTaskId(
    sandboxId: string,
    signal?: AbortSignal,
  ): Promise<M.SandboxGetTaskIdResponse> {
    return await this.unary(
      "SandboxGetTaskId",
      M.SandboxGetTaskIdRequest,
      M.SandboxGetTaskIdResponse,
      { sandboxId },
      { signal },
    );
  }

  /** `TaskGetCommandRouterAccess` → `{jwt, url}`. */
  async taskGetCommandRouterAccess(
    taskId: string,
    signal?: AbortSignal,
  ): Promise<M.TaskGetCommandRouterAccessResponse> {
    return await this.unary(
      "TaskGetCommandRouterAccess",
      M.TaskGetCommandRouterAccessRequest,
      M.TaskGetCommandRouterAccessResponse,
      { taskId },
      { signal },
    );
  }

  /** `SandboxGetTunnels{timeout}`. */
  async sandboxGetTunnels(
    sandboxId: string,
    timeoutS: number,
    signal?: AbortSignal,
  ): Promise<M.SandboxGetTunnelsResponse> {
    return await this.unary(
      "SandboxGetTunnels",
      M.SandboxGetTunnelsRequest,
      M.SandboxGetTunnelsResponse,
      { sandboxId, timeout: timeoutS },
      { signal },
    );
  }
}

/**
 * Builds one image layer chain from a registry tag, as the SDK's `Image.build`:
 * `ImageGetOrCreate` per layer, following `ImageJoinStreaming` until a result when the
 * build is not done. Layer 0 is `FROM <tag>`; each further layer is `FROM base` plus its
 * commands, with `base_images` pointing at the previous layer. Returns the last image id.
 */
export async function buildRegistryImage(
  api: ModalApi,
  appId: string,
  tag: string,
  extraLayers: string[][],
  signal?: AbortSignal,
): Promise<string> {
  let baseImageId = "";
  const layers = [[], ...extraLayers];
  for (let i = 0; i < layers.length; i++) {
    const commands = layers[i]!;
    const image: Partial<M.Image> = i === 0
      ? { dockerfileCommands: [`FROM ${tag}`, ...commands], baseImages: [], contextFiles: [] }
      : {
        dockerfileCommands: ["FROM base", ...commands],
        baseImages: [{ dockerTag: "base", imageId: baseImageId }],
        contextFiles: [],
      };
    const res = await api.unary(
      "ImageGetOrCreate",
      M.ImageGetOrCreateRequest,
      M.ImageGetOrCreateResponse,
      {
        appId,
        image: image as M.Image,
        builderVersion: api.profile.imageBuilderVersion,
        forceBuild: false,
      },
      { signal },
    );
    let result = res.result?.status ? res.result : undefined;
    let lastEntryId = "";
    while (result === undefined) {
      for await (
        const item of api.stream(
          "ImageJoinStreaming",
          M.ImageJoinStreamingRequest,
          M.ImageJoinStreamingResponse,
          {
            imageId: res.imageId,
            timeout: 55,
            lastEntryId,
          },
          { signal },
        )
      ) {
        if (item.entryId) lastEntryId = item.entryId;
        if (item.result?.status) {
          result = item.result;
          break;
        }
      }
    }
    if (result.status !== M.GenericStatus.SUCCESS) {
      const why = result.status === M.GenericStatus.FAILURE
        ? `failed: ${result.exception}`
        : result.status === M.GenericStatus.TERMINATED
        ? "was terminated"
        : result.status === M.GenericStatus.TIMEOUT
        ? "timed out"
        : `ended with status ${result.status}`;
      throw new SandboxError(`modal image build for "${tag}" (${res.imageId}) ${why}`, {
        hint: "Check that the image tag exists and is public (runtime key image)",
      });
    }
    baseImageId = res.imageId;
  }
  return baseImageId;
}
