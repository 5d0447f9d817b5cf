/**
 * gRPC status codes and the errors of a gRPC call: {@link GrpcError}, the status read from
 * an HTTP status or a stream reset when the server sent none, and `grpc-message`
 * percent-decoding, as the gRPC protocol maps them.
 *
 * @module
 */
import http2 from "node:http2";

/** gRPC status codes. */
export const Status = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const;

const STATUS_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(Status).map(([k, v]) => [v, k]),
);

/** The name of a gRPC status code (`NOT_FOUND`), or `CODE_<n>`. */
function statusName(code: number): string {
  return STATUS_NAMES[code] ?? `CODE_${code}`;
}

/** A call that ended with a non-OK gRPC status. */
export class GrpcError extends Error {
  /** The gRPC status code. */
  readonly code: number;
  /** The status message (`grpc-message`, percent-decoded). */
  readonly details: string;
  /** The method path, e.g. `/modal.client.ModalClient/SandboxCreate`. */
  readonly path: string;
  constructor(code: number, details: string, path: string, options: { cause?: unknown } = {}) {
    super(
      `${path.split("/").pop() || path} failed: ${statusName(code)}${
        details ? `: ${details}` : ""
      }`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "GrpcError";
    this.code = code;
    this.details = details;
    this.path = path;
  }
}

/** Maps an HTTP status of a non-gRPC response to a gRPC code (the gRPC spec's table). */
export function httpStatusToGrpc(status: number): number {
  switch (status) {
    case 400:
      return Status.INTERNAL;
    case 401:
      return Status.UNAUTHENTICATED;
    case 403:
      return Status.PERMISSION_DENIED;
    case 404:
      return Status.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return Status.UNAVAILABLE;
    default:
      return Status.UNKNOWN;
  }
}

/** Maps an HTTP/2 RST_STREAM code (no gRPC status received) to a gRPC code. */
export function rstCodeToGrpc(rst: number): number {
  switch (rst) {
    case http2.constants.NGHTTP2_REFUSED_STREAM:
      return Status.UNAVAILABLE;
    case http2.constants.NGHTTP2_CANCEL:
      return Status.CANCELLED;
    case http2.constants.NGHTTP2_ENHANCE_YOUR_CALM:
      return Status.RESOURCE_EXHAUSTED;
    case http2.constants.NGHTTP2_INADEQUATE_SECURITY:
      return Status.PERMISSION_DENIED;
    default:
      return Status.INTERNAL;
  }
}

/** Percent-decodes a `grpc-message` value (invalid escapes are kept as they are). */
export function decodeGrpcMessage(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
