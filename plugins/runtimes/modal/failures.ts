/**
 * What a gRPC failure means to the Modal runtime: whether a create was refused outright
 * (no sandbox exists to terminate), and the hint a provisioning or exec error carries.
 *
 * @module
 */
import { GrpcError, Status } from "./grpc.ts";

/** gRPC codes by which Modal refuses a create outright (no sandbox was made). */
const REFUSALS: ReadonlySet<number> = new Set([
  Status.INVALID_ARGUMENT,
  Status.NOT_FOUND,
  Status.ALREADY_EXISTS,
  Status.PERMISSION_DENIED,
  Status.RESOURCE_EXHAUSTED,
  Status.FAILED_PRECONDITION,
  Status.OUT_OF_RANGE,
  Status.UNIMPLEMENTED,
  Status.UNAUTHENTICATED,
]);

/** True when Modal refused a create outright: nothing was made, nothing to terminate. */
export function isRefusal(e: unknown): boolean {
  return e instanceof GrpcError && REFUSALS.has(e.code);
}

/** A hint for a failed provisioning, by gRPC code. */
export function provisioningHint(e: unknown): string | undefined {
  if (!(e instanceof GrpcError)) return undefined;
  switch (e.code) {
    case Status.UNAUTHENTICATED:
      return "Check MODAL_TOKEN_ID and MODAL_TOKEN_SECRET";
    case Status.UNAVAILABLE:
      return "Modal is unreachable; check MODAL_SERVER_URL and the network";
    case Status.ALREADY_EXISTS:
      return "A running sandbox already has this name in the app";
    default:
      return undefined;
  }
}

/** A hint for a failed exec, by gRPC code. */
export function execHint(e: unknown): string | undefined {
  if (e instanceof GrpcError && (e.code === Status.NOT_FOUND || e.code === Status.UNAVAILABLE)) {
    return "The sandbox may have ended (lifetime timeout or terminated)";
  }
  return undefined;
}
