/**
 * The `command` harness runs a real agent program (a Node script using the official
 * `openai` client) in a temp-dir runtime against a scripted chat completions server.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import process from "node:process";
import commandHarness from "../plugins/harnesses/command/mod.ts";
import { tempRuntime } from "./_temp_runtime.ts";
import { harnessConfig } from "./_trace_helpers.ts";
import type { Message } from "../kit/trace/types.ts";
import { at } from "./_assert.ts";

const SECRET = "sk-command-test-secret";
const OPENAI_URL = new URL("../node_modules/openai/index.mjs", import.meta.url).href;

interface Recorded {
  headers: IncomingHttpHeaders;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A strict chat completions server that answers every valid request with `reply`. */
async function chatServer(reply: string) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (raw += c));
    req.on("end", () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      const fail = (status: number, message: string) =>
        send(status, { error: { message, type: "invalid_request_error" } });
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") return fail(404, "no route");
      if (req.headers.authorization !== `Bearer ${SECRET}`) return fail(401, "invalid api key");
      let body;
      try {
        body = JSON.parse(raw);
      } catch {
        return fail(400, "invalid JSON");
      }
      requests.push({ headers: req.headers, body });
      if (typeof body.model !== "string" || !Array.isArray(body.messages)) {
        return fail(400, "model and messages are required");
      }
      send(200, {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: body.model,
        choices: [{
          index: 0,
          message: { role: "assistant", content: reply, refusal: null },
          finish_reason: "stop",
          logprobs: null,
        }],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** The agent program: reads the harness's variables and calls the endpoint once. */
function agentScript(vars: { base: string; key: string; model: string }): string {
  return `
import OpenAI from ${JSON.stringify(OPENAI_URL)};
import { readFileSync } from "node:fs";
const env = process.env;
const client = new OpenAI({ baseURL: env.${vars.base}, apiKey: env.${vars.key}, maxRetries: 0 });
const messages = JSON.parse(readFileSync(env.VF_MESSAGES_FILE, "utf8"));
const r = await client.chat.completions.create({ model: env.${vars.model}, messages });
console.log(JSON.stringify({
  reply: r.choices[0].message.content,
  prompt: env.VF_PROMPT,
  system: env.VF_SYSTEM_PROMPT,
  extra: env.EXTRA ?? null,
  file: env.VF_MESSAGES_FILE,
}));
`;
}

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "vf-harness-command-"));
});
after(() => {
  rmSync(root, { recursive: true, force: true });
});

const MESSAGES: Message[] = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Say hello." },
];

async function launch(
  config: Record<string, unknown>,
  options: { endpoint: string; messages?: Message[]; dir?: string },
) {
  const dir = options.dir ?? mkdtempSync(join(root, "r"));
  const logs: string[] = [];
  const result = await commandHarness.launch({
    runtime: tempRuntime(dir),
    endpoint: options.endpoint,
    secret: SECRET,
    model: "test-model",
    messages: options.messages ?? MESSAGES,
    config: harnessConfig(commandHarness, config),
    signal: new AbortController().signal,
    log: (m) => logs.push(m),
  });
  return { result, logs, dir };
}

describe("command harness", () => {
  it("declares its capabilities, requires a command and has defaults", () => {
    assert.equal(commandHarness.id, "command");
    assert.deepEqual(commandHarness.capabilities, {
      executesCode: true,
      needsContainer: false,
      appendsSystemPrompt: true,
      toolsets: true,
    });
    assert.throws(() => commandHarness.config.parse({}));
    assert.throws(() => commandHarness.config.parse({ command: [] }));
    assert.throws(() => commandHarness.config.parse({ command: ["x"], model_var: "BAD-NAME" }));
    assert.deepEqual(commandHarness.config.parse({ command: ["agent"] }), {
      command: ["agent"],
      base_url_var: "OPENAI_BASE_URL",
      api_key_var: "OPENAI_API_KEY",
      model_var: "OPENAI_MODEL",
      anthropic_base_url_var: "ANTHROPIC_BASE_URL",
      anthropic_api_key_var: "ANTHROPIC_API_KEY",
      prompt_var: "VF_PROMPT",
      system_prompt_var: "VF_SYSTEM_PROMPT",
      env: {},
      tool_timeout: 600,
      disabled_tools: null,
    });
  });

  it("runs an openai-client program that reaches the endpoint with the rollout's key and model", async () => {
    const server = await chatServer("hello from the model");
    try {
      const dir = mkdtempSync(join(root, "r"));
      await writeFile(
        join(dir, "agent.mjs"),
        agentScript({ base: "OPENAI_BASE_URL", key: "OPENAI_API_KEY", model: "OPENAI_MODEL" }),
      );
      const { result } = await launch({ command: ["node", "agent.mjs"] }, {
        endpoint: server.url,
        dir,
      });
      assert.equal(result.exitCode, 0, result.stderr);
      const out = JSON.parse(result.stdout);
      assert.deepEqual(
        { reply: out.reply, prompt: out.prompt, system: out.system, extra: out.extra },
        { reply: "hello from the model", prompt: "Say hello.", system: "Be brief.", extra: null },
      );
      assert.equal(existsSync(out.file), false, "the messages file is removed afterwards");
      assert.equal(server.requests.length, 1);
      const req = at(server.requests, 0);
      assert.equal(req.headers.authorization, `Bearer ${SECRET}`);
      assert.equal(req.headers["x-stainless-retry-count"], "0");
      assert.equal(req.body.model, "test-model");
      assert.deepEqual(req.body.messages, MESSAGES);
    } finally {
      await server.close();
    }
  });

  it("honours custom variable names and extra env, its own variables winning", async () => {
    const server = await chatServer("custom ok");
    try {
      const dir = mkdtempSync(join(root, "r"));
      await writeFile(
        join(dir, "agent.mjs"),
        agentScript({ base: "MY_BASE", key: "MY_KEY", model: "MY_MODEL" }),
      );
      const { result } = await launch({
        command: ["node", "agent.mjs"],
        base_url_var: "MY_BASE",
        api_key_var: "MY_KEY",
        model_var: "MY_MODEL",
        env: {
          EXTRA: "extra-value",
          MY_KEY: "sk-overridden",
          OPENAI_BASE_URL: "http://127.0.0.1:9/v1",
        },
      }, { endpoint: server.url, dir });
      assert.equal(result.exitCode, 0, result.stderr);
      const out = JSON.parse(result.stdout);
      assert.equal(out.reply, "custom ok");
      assert.equal(out.extra, "extra-value");
      assert.equal(at(server.requests, 0).headers.authorization, `Bearer ${SECRET}`);
      assert.equal(at(server.requests, 0).body.model, "test-model");
    } finally {
      await server.close();
    }
  });

  it("gives Anthropic SDKs the endpoint's root (no /v1) and the rollout's key", async () => {
    const { result } = await launch(
      { command: ["bash", "-c", 'printf "%s\\n%s" "$ANTHROPIC_BASE_URL" "$ANTHROPIC_API_KEY"'] },
      { endpoint: "http://127.0.0.1:9/v1" },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    assert.deepEqual(result.stdout.split("\n"), ["http://127.0.0.1:9", SECRET]);
  });

  it("writes the initial conversation in OpenAI chat shape to VF_MESSAGES_FILE", async () => {
    const messages: Message[] = [
      { role: "user", content: "continue" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "t1", name: "bash", arguments: '{"command":"ls"}' }],
      },
      { role: "tool", tool_call_id: "t1", content: "a.txt\n", name: "bash" },
    ];
    const { result } = await launch(
      { command: ["bash", "-c", 'cat "$VF_MESSAGES_FILE"; printf "\\n%s" "$VF_PROMPT"'] },
      { endpoint: "http://127.0.0.1:9/v1", messages },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const [json, ...prompt] = result.stdout.split("\n");
    assert.deepEqual(JSON.parse(json ?? ""), [
      { role: "user", content: "continue" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "t1",
          type: "function",
          function: { name: "bash", arguments: '{"command":"ls"}' },
        }],
      },
      { role: "tool", tool_call_id: "t1", content: "a.txt\n" },
    ]);
    assert.equal(prompt.join("\n"), "continue");
  });

  it("puts the messages file next to the work directory, not in it, and removes it", async () => {
    const { result, dir } = await launch(
      { command: ["bash", "-c", 'echo "$VF_MESSAGES_FILE"; ls -A'] },
      { endpoint: "http://127.0.0.1:9/v1" },
    );
    assert.equal(result.exitCode, 0, result.stderr);
    const [file, ...listing] = result.stdout.trimEnd().split("\n");
    assert.deepEqual(listing, [], "the program's working directory holds nothing of the harness");
    const folder = dirname(file ?? "");
    assert.equal(dirname(folder), dirname(dir), "next to the work directory");
    // named after this process, as a work directory is: a killed run's is found and removed
    assert.match(basename(folder), new RegExp(`^vf-command-p${process.pid}-[A-Za-z0-9]{6}$`));
    assert.equal(existsSync(folder), false, "removed once the program ended");
  });

  it("returns the program's exit code and output unchanged", async () => {
    const { result, logs } = await launch(
      { command: ["bash", "-c", "echo partial; echo oops >&2; exit 7"] },
      { endpoint: "http://127.0.0.1:9/v1" },
    );
    assert.deepEqual(result, { exitCode: 7, stdout: "partial\n", stderr: "oops\n" });
    assert.equal(logs.length, 1);
    assert.ok(!at(logs, 0).includes(SECRET));
  });
});
