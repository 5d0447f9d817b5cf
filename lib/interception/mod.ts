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
 * The parts: server.ts (routes, authentication, sessions), call.ts (one call), relay.ts
 * (streams), session.ts (a rollout's state and limits), headers.ts, graph.ts (the trace's
 * message graph). The dialects served are lib/dialects/mod.ts's; the upstream clients are
 * in lib/clients/.
 *
 * @module
 */
export {
  type InterceptionLog,
  type InterceptionServer,
  type InterceptionServerOptions,
  startInterceptionServer,
} from "./server.ts";
export type {
  InterceptionSession,
  SessionLimits,
  SessionOptions,
  SessionTrace,
} from "./session.ts";
