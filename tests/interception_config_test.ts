/**
 * `env.interception` with Python's keys: the server binds the configured port, and the
 * `command` harness hands its program the endpoint there; Python's pool keys are taken
 * without a warning.
 */
import assert from "node:assert/strict";
import { createServer } from "node:net";
import { describe, it } from "node:test";
import { at } from "./_assert.ts";
import { evalInProcess } from "./_eval.ts";

/** A port free on 127.0.0.1 just now. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("env.interception", () => {
  it("binds the configured port and hands programs that endpoint", async () => {
    const port = await freePort();
    const { episodes } = await evalInProcess([
      "echo",
      "-n",
      "1",
      "-m",
      "oracle",
      "--env.interception.port",
      String(port),
      "--env.interception.multiplex",
      "8",
      "--env.agent.harness.id",
      "command",
      "--env.agent.harness.command",
      JSON.stringify(["sh", "-c", 'echo "endpoint=$OPENAI_BASE_URL"']),
    ]);
    const t = at(at(episodes, 0).traces, 0);
    assert.match(JSON.stringify(t.info), new RegExp(`endpoint=http://127\\.0\\.0\\.1:${port}/`));
  });
});
