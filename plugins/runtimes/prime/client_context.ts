/**
 * What the parts of one `PrimeClient` share (client.ts): the account and its settings, the
 * transport, the client's lifetime, and what it learnt about sandboxes along the way.
 *
 * @module
 */
import { VERSION } from "../../../kit/mod.ts";
import type { FetchLike } from "./http.ts";

/** The `User-Agent` of every request. */
export const USER_AGENT = `verifiers-ts/${VERSION}`;

/** Shared by the control plane, the gateway and the command calls of one client. */
export interface ClientContext {
  readonly baseUrl: string;
  /** Secret: sent only as a bearer token to the control plane. */
  readonly apiKey: string;
  readonly teamId: string | null;
  readonly fetch: FetchLike;
  /** Control-plane request timeout. */
  readonly requestTimeoutMs: number;
  /** Multiplies every retry backoff. */
  readonly backoffScale: number;
  /** Timeout of an upload or a download. */
  readonly transferTimeoutMs: number;
  /** Aborted when the client closes. */
  readonly life: AbortSignal;
  /** Throws when the client is closed. */
  check(): void;
  /** Whether a sandbox is a VM, as far as the client has seen (decides exec vs Connect). */
  readonly vm: Map<string, boolean>;
}
