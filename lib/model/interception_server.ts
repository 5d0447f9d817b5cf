/**
 * The interception server: the single model boundary of a run. Harness programs speak a
 * model API dialect (OpenAI chat completions by default) to it over loopback HTTP, one
 * server per run; each rollout has its own secret. For every call it enforces the
 * rollout's limits and stops, swaps in the run's model and sampling, forwards the call
 * upstream (JSON or SSE relayed as it arrives), replays SDK retries instead of sampling
 * again, grows the trace's message graph and records one `ModelCall` per real
 * exchange.
 *
 * Status codes the program sees: 401 unknown secret, 409 closed session, 400
 * `rollout stopped: <condition>`, else the provider's own status (503/504/502 for
 * transport, timeout and malformed responses).
 *
 * The parts: interception/server.ts (routes, authentication, sessions),
 * interception/call.ts (one call), interception/relay.ts (streams),
 * interception/session.ts (a rollout's state and limits), interception/headers.ts.
 *
 * @module
 */
export {
  type InterceptionLog,
  type InterceptionServer,
  type InterceptionServerOptions,
  startInterceptionServer,
} from "./interception/server.ts";
export type {
  InterceptionSession,
  SessionLimits,
  SessionOptions,
  SessionTrace,
} from "./interception/session.ts";
