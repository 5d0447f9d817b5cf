/**
 * The pinned packages of the `codex` harness, by Codex version.
 *
 * @module
 */
import { type AgentBundle, BUN_PACKAGE } from "../../../kit/mod.ts";

/** The Codex version installed when the config names none. */
export const DEFAULT_VERSION = "0.171.0";

/** The packages of each Codex version this harness knows. */
export const BUNDLES: Readonly<Record<string, AgentBundle>> = {
  "0.171.0": {
    name: "codex",
    version: "0.171.0",
    packages: [
      {
        name: "@openai/codex",
        version: "0.171.0",
        integrity:
          "sha512-1IOFzL2Xg86tLdw6kDo3GoKbkQENgQi7TI6rlEvN132R7ngSw7SNOIQoTcnKzSZZ8kf9N9GynCweSoaFbqk2Eg==",
      },
      {
        name: "@agentclientprotocol/codex-acp",
        version: "2.6.0",
        integrity:
          "sha512-/PBsd0H6URy4bhXhAeXqwb7RqctbXfNceRihAh6nDmn5HJ873uzoHvHxF45YmeWfgOKKRrNRLZjYsket2a7EsQ==",
      },
      BUN_PACKAGE,
    ],
    // codex-acp depends on a Codex of its own (0.166, 436 MB); CODEX_PATH runs the pinned one
    overrides: { "@agentclientprotocol/codex-acp": { "@openai/codex": "$@openai/codex" } },
  },
};
