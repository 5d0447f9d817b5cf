/**
 * Every built-in harness passes the harness conformance suite in the local runtime. The
 * `command` harness runs a small OpenAI-compatible agent program (plain `fetch` in a Node
 * process) that sends the initial conversation once and prints the reply.
 */
import type { HarnessPlugin } from "../kit/contract.ts";
import { BUILTIN_PLUGINS } from "../plugins/builtins.ts";
import local from "../plugins/runtimes/local/mod.ts";
import { harnessConformance } from "./conformance/harness_conformance.ts";

/** An agent program: one chat completion from the variables the command harness sets. */
const AGENT = `
const fs = require("node:fs");
const e = process.env;
const messages = JSON.parse(fs.readFileSync(e.VF_MESSAGES_FILE, "utf8"));
fetch(e.OPENAI_BASE_URL + "/chat/completions", {
  method: "POST",
  headers: { "content-type": "application/json", authorization: "Bearer " + e.OPENAI_API_KEY },
  body: JSON.stringify({ model: e.OPENAI_MODEL, messages }),
}).then(async (res) => {
  const body = await res.json();
  if (!res.ok) {
    console.error("model error " + res.status + ": " + body.error.message);
    process.exit(1);
  }
  console.log(body.choices[0].message.content);
}, (err) => {
  console.error(String(err));
  process.exit(1);
});
`;

/** The config keys without a default, per built-in harness. */
const CONFIG: Record<string, Record<string, unknown>> = {
  command: { command: ["node", "-e", AGENT] },
};

/**
 * Harnesses whose agents speak another dialect than the suite's chat completions stand-in:
 * their end-to-end tests run them through the interception server against a strict provider
 * of their own dialect, model errors and the rollout's deadline included.
 */
const OTHER_DIALECT: Record<string, string> = {
  "claude-code": "tests/harness_claude_code_test.ts (Anthropic Messages)",
  "codex": "tests/harness_codex_test.ts (OpenAI Responses)",
};

for (const [id, load] of Object.entries(BUILTIN_PLUGINS.modules.harness)) {
  const plugin = (await load()).default as HarnessPlugin;
  if (OTHER_DIALECT[id]) {
    console.log(`harness conformance: ${id} is checked by ${OTHER_DIALECT[id]}`);
    continue;
  }
  harnessConformance(id, {
    plugin,
    config: CONFIG[id] ?? {},
    makeRuntime: () => local.create({}, { name: `harness-conformance-${id}` }),
  });
}
