/**
 * The pinned packages of the `claude-code` harness, by Claude Code version.
 *
 * @module
 */
import { type AgentBundle, BUN_PACKAGE } from "../../../kit/mod.ts";

/** The Claude Code version installed when the config names none. */
export const DEFAULT_VERSION = "2.1.332";

/** The packages of each Claude Code version this harness knows. */
export const BUNDLES: Readonly<Record<string, AgentBundle>> = {
  "2.1.332": {
    name: "claude-code",
    version: "2.1.332",
    packages: [
      {
        name: "@anthropic-ai/claude-code",
        version: "2.1.332",
        integrity:
          "sha512-tvSh6bLvEbd97APD31AnojOrRC3AmcRj5R8sF8QIQitu3x2ucOb1kKmTkGDw41kjva+CGJfpkt+wYouk6yv56Q==",
      },
      {
        name: "@agentclientprotocol/claude-agent-acp",
        version: "0.101.0",
        integrity:
          "sha512-c9YGBfdJrLcKiinRpXuDuibC+CRGqQpe9+ey/+TuuZ7ejHlVyEELbbvRkxHZN+Hf5XGecJD5i0kvP2opCseATA==",
      },
      BUN_PACKAGE,
    ],
  },
};
