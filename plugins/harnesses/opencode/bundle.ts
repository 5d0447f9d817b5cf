/**
 * The pinned packages of the `opencode` harness, by OpenCode version. `opencode-ai` brings
 * its platform's native binary as an optional dependency (npm checks each tarball against
 * its lock); the binary is a Bun executable, so no JavaScript runtime is installed with it.
 *
 * @module
 */
import type { AgentBundle } from "../../../kit/mod.ts";

/** The OpenCode version installed when the config names none. */
export const DEFAULT_VERSION = "1.18.33";

/** The packages of each OpenCode version this harness knows. */
export const BUNDLES: Readonly<Record<string, AgentBundle>> = {
  "1.18.33": {
    name: "opencode",
    version: "1.18.33",
    packages: [
      {
        name: "opencode-ai",
        version: "1.18.33",
        integrity:
          "sha512-58P1ffLRXiAY4QeoABqUjqf6DEzm1ihpovvn9Ad+oOLbLiwK/rf88wruT9IATJ7AtNjmi8iA7pC8tN4o5y799Q==",
      },
    ],
  },
};
