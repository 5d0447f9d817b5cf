/**
 * The host-side chat loop through the `bash` and `null` harnesses, against a strict
 * scripted OpenAI-compatible server on loopback and a temp-dir runtime.
 */
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import bashHarness from "../plugins/harnesses/bash/mod.ts";
import nullHarness from "../plugins/harnesses/null/mod.ts";
import { runChatLoop } from "../kit/harness/chat_loop.ts";
import type { HarnessPlugin } from "../kit/contract.ts";
import { tempRuntime } from "./_temp_runtime.ts";
import type { Message } from "../kit/trace/types.ts";
import { harnessConfig } from "./_trace_helpers.ts";
import { at } from "./_assert.ts";

const SECRET = "sk-rollout-test-secret";
const BASH_SENTENCE =
  "You are a coding agent. You have access to a bash tool for running shell commands.";
const EDIT_SENTENCE =
  " You also have an edit tool for single-occurrence string replacement in a file.";

// ---------- a strict scripted OpenAI-compatible server ----------

interface Recorded {
  headers: IncomingHttpHeaders;
  raw: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body: unknown;
}

function completion(message: Record<string, unknown>, finish: string): Reply {
  return {
    body: {
      id: "chatcmpl-test",
      object: "chat.completion",
      created: 1,
      model: "scripted",
      choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    },
  };
}

function text(content: string): Reply {
  return completion({ content, refusal: null }, "stop");
}

let callSeq = 0;
function calls(...list: [name: string, args: string][]): Reply {
  return completion({
    content: null,
    tool_calls: list.map(([name, args]) => ({
      id: `call_${++callSeq}`,
      type: "function",
      function: { name, arguments: args },
    })),
  }, "tool_calls");
}

function apiError(status: number, message: string, headers?: Record<string, string>): Reply {
  const body = { error: { message, type: "invalid_request_error" } };
  return headers === undefined ? { status, body } : { status, headers, body };
}

/** Rejects what the real API rejects: bad auth, bad shapes, unanswered or stray tool calls. */
// deno-lint-ignore no-explicit-any
function validate(headers: IncomingHttpHeaders, body: any): string | null {
  if (headers.authorization !== `Bearer ${SECRET}`) return "401";
  if (typeof body?.model !== "string" || !body.model) return "missing model";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "missing messages";
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools) || body.tools.length === 0) return "tools must be non-empty";
    for (const t of body.tools) {
      if (t.type !== "function" || typeof t.function?.name !== "string") return "bad tool";
      if (t.function.parameters?.type !== "object") return "bad tool parameters";
    }
  }
  let pending: string[] = [];
  for (const m of body.messages) {
    if (m.role === "tool") {
      if (!pending.includes(m.tool_call_id)) return `stray tool message ${m.tool_call_id}`;
      if (typeof m.content !== "string") return "tool content must be a string";
      pending = pending.filter((id) => id !== m.tool_call_id);
      continue;
    }
    if (pending.length > 0) return `tool calls not answered: ${pending.join(",")}`;
    if (!["system", "user", "assistant"].includes(m.role)) return `bad role ${m.role}`;
    if (m.role === "assistant" && m.tool_calls !== undefined) {
      for (const c of m.tool_calls) {
        if (c.type !== "function" || typeof c.function?.arguments !== "string") {
          return "bad assistant tool call";
        }
        pending.push(c.id);
      }
    }
  }
  if (pending.length > 0) return `tool calls not answered: ${pending.join(",")}`;
  return null;
}

async function scriptedServer(script: Reply[]) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (raw += c));
    req.on("end", () => {
      const send = (r: Reply) => {
        res.writeHead(r.status ?? 200, { "content-type": "application/json", ...r.headers });
        res.end(JSON.stringify(r.body));
      };
      if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
        return send(apiError(404, "not found"));
      }
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        return send(apiError(400, "invalid JSON body"));
      }
      requests.push({ headers: req.headers, raw, body });
      const problem = validate(req.headers, body);
      if (problem === "401") return send(apiError(401, "invalid api key"));
      if (problem) return send(apiError(400, `invalid request: ${problem}`));
      send(script.shift() ?? apiError(400, "script exhausted"));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

// ---------- helpers ----------

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), "vf-harness-bash-"));
});
after(() => {
  rmSync(root, { recursive: true, force: true });
});

function freshDir(): string {
  return mkdtempSync(join(root, "r"));
}

async function launch(
  harness: HarnessPlugin,
  script: Reply[],
  options: {
    messages?: Message[];
    config?: Record<string, unknown>;
    dir?: string;
    signal?: AbortSignal;
  } = {},
) {
  const server = await scriptedServer(script);
  const dir = options.dir ?? freshDir();
  const logs: string[] = [];
  try {
    const result = await harness.launch({
      runtime: tempRuntime(dir),
      endpoint: server.url,
      secret: SECRET,
      model: "test-model",
      messages: options.messages ?? [{ role: "user", content: "do the task" }],
      config: harnessConfig(harness, options.config),
      signal: options.signal ?? new AbortController().signal,
      log: (m) => logs.push(m),
    });
    return { result, requests: server.requests, dir, logs };
  } finally {
    await server.close();
  }
}

// deno-lint-ignore no-explicit-any
function toolMessages(req: Recorded): any[] {
  // deno-lint-ignore no-explicit-any
  return req.body.messages.filter((m: any) => m.role === "tool");
}

// ---------- tests ----------

describe("bash harness", () => {
  it("declares its capabilities and config defaults", () => {
    assert.equal(bashHarness.kind, "harness");
    assert.equal(bashHarness.id, "bash");
    assert.deepEqual(bashHarness.capabilities, {
      executesCode: true,
      needsContainer: false,
      appendsSystemPrompt: true,
      toolsets: true,
    });
    assert.deepEqual(bashHarness.config.parse({}), {
      command_timeout: 3600,
      edit: true,
      max_output_bytes: null,
      tool_timeout: 600,
      disabled_tools: null,
    });
    assert.throws(() => bashHarness.config.parse({ command_timeout: -1 }));
  });

  it("runs tool calls in the runtime and sends stdout then stderr back", async () => {
    const { result, requests, dir } = await launch(bashHarness, [
      calls(
        ["bash", JSON.stringify({ command: "echo err >&2; echo out; exit 3" })],
        ["bash", JSON.stringify({ command: "echo made > made.txt" })],
      ),
      text("all done"),
    ]);
    assert.deepEqual(result, { exitCode: 0, stdout: "all done", stderr: "" });
    assert.equal(requests.length, 2);
    for (const r of requests) {
      assert.equal(r.headers.authorization, `Bearer ${SECRET}`);
      assert.equal(r.body.model, "test-model");
      // deno-lint-ignore no-explicit-any
      assert.deepEqual(r.body.tools.map((t: any) => t.function.name), ["bash", "edit"]);
    }
    const second = at(requests, 1).body.messages;
    const assistant = second[second.length - 3];
    assert.equal(assistant.role, "assistant");
    assert.equal(assistant.tool_calls.length, 2);
    assert.deepEqual(toolMessages(at(requests, 1)), [
      { role: "tool", tool_call_id: assistant.tool_calls[0].id, content: "out\nerr\n" },
      { role: "tool", tool_call_id: assistant.tool_calls[1].id, content: "" },
    ]);
    assert.equal(await readFile(join(dir, "made.txt"), "utf8"), "made\n");
  });

  it("prepends its own sentences to the task system prompt in one system message", async () => {
    const { requests } = await launch(bashHarness, [text("ok")], {
      messages: [
        { role: "system", content: "Answer tersely." },
        { role: "user", content: "hi" },
      ],
    });
    const msgs = at(requests, 0).body.messages;
    assert.equal(msgs.length, 2);
    assert.deepEqual(msgs[0], {
      role: "system",
      content: BASH_SENTENCE + EDIT_SENTENCE + "\n\nAnswer tersely.",
    });
    assert.deepEqual(msgs[1], { role: "user", content: "hi" });
  });

  it("without edit and without a task system prompt: one sentence and only the bash tool", async () => {
    const { requests } = await launch(bashHarness, [text("ok")], { config: { edit: false } });
    const msgs = at(requests, 0).body.messages;
    assert.deepEqual(msgs, [
      { role: "system", content: BASH_SENTENCE },
      { role: "user", content: "do the task" },
    ]);
    // deno-lint-ignore no-explicit-any
    assert.deepEqual(at(requests, 0).body.tools.map((t: any) => t.function.name), ["bash"]);
  });

  it("edit replaces exactly one occurrence and corrects zero or several", async () => {
    const dir = freshDir();
    await writeFile(join(dir, "notes.txt"), "alpha beta alpha gamma\n");
    const edit = (path: string, oldStr: string, newStr: string) =>
      ["edit", JSON.stringify({ path, old_str: oldStr, new_str: newStr })] as [string, string];
    const { result, requests } = await launch(bashHarness, [
      calls(edit("notes.txt", "beta", "B$&")),
      calls(edit("notes.txt", "alpha", "A")),
      calls(edit("notes.txt", "zeta", "Z")),
      calls(edit("missing.txt", "x", "y")),
      calls(["edit", JSON.stringify({ path: "notes.txt", old_str: "gamma" })]),
      text("edited"),
    ], { dir });
    assert.equal(result.exitCode, 0);
    const tools = toolMessages(at(requests, 5)).map((m) => m.content);
    assert.equal(tools.length, 5);
    assert.match(tools[0], /^Edited notes\.txt/);
    assert.match(tools[1], /occurs 2 times.*exactly once/);
    assert.match(tools[2], /not found/);
    assert.match(tools[3], /^Error: cannot read missing\.txt/);
    assert.match(tools[4], /needs string arguments 'path', 'old_str' and 'new_str'/);
    assert.equal(await readFile(join(dir, "notes.txt"), "utf8"), "alpha B$& alpha gamma\n");
    assert.equal(existsSync(join(dir, "missing.txt")), false);
  });

  it("edit is an unknown tool when turned off", async () => {
    const dir = freshDir();
    await writeFile(join(dir, "f.txt"), "one\n");
    const { result, requests } = await launch(bashHarness, [
      calls(["edit", JSON.stringify({ path: "f.txt", old_str: "one", new_str: "two" })]),
      text("ok"),
    ], { dir, config: { edit: false } });
    assert.equal(result.exitCode, 0);
    assert.equal(
      toolMessages(at(requests, 1))[0].content,
      "Error: unknown tool 'edit'. Available tools: bash.",
    );
    assert.equal(await readFile(join(dir, "f.txt"), "utf8"), "one\n");
  });

  it("turns invalid JSON, non-object arguments and unknown tools into corrective messages", async () => {
    const { result, requests } = await launch(bashHarness, [
      calls(
        ["bash", '{"command": "echo hi"'],
        ["bash", "[1, 2]"],
        ["bash", "null"],
        ["python", JSON.stringify({ code: "print(1)" })],
        ["bash", "{}"],
      ),
      calls(["bash", JSON.stringify({ command: "echo still going" })]),
      text("recovered"),
    ]);
    assert.deepEqual(result, { exitCode: 0, stdout: "recovered", stderr: "" });
    assert.equal(requests.length, 3);
    const first = toolMessages(at(requests, 1)).map((m) => m.content);
    assert.match(first[0], /^Error: the arguments of tool 'bash' are not valid JSON/);
    assert.equal(first[1], "Error: the arguments of tool 'bash' must be a JSON object.");
    assert.equal(first[2], "Error: the arguments of tool 'bash' must be a JSON object.");
    assert.equal(first[3], "Error: unknown tool 'python'. Available tools: bash, edit.");
    assert.equal(first[4], "Error: the bash tool needs a string argument 'command'.");
    assert.equal(toolMessages(at(requests, 2))[5].content, "still going\n");
  });

  it("caps tool output at max_output_bytes when set", async () => {
    const { requests } = await launch(bashHarness, [
      calls(["bash", JSON.stringify({ command: "printf '%0100d' 0" })]),
      text("ok"),
    ], { config: { max_output_bytes: 10 } });
    assert.equal(
      toolMessages(at(requests, 1))[0].content,
      "0000000000\n[output truncated: showing 10 of 100 bytes]",
    );
  });

  it("ends with exit code 1 and the status when a call is refused", async () => {
    const { result, requests } = await launch(bashHarness, [
      calls(["bash", JSON.stringify({ command: "echo one" })]),
      apiError(400, "rollout stopped: max_turns"),
    ]);
    assert.deepEqual(result, {
      exitCode: 1,
      stdout: "",
      stderr: "400 rollout stopped: max_turns",
    });
    assert.equal(requests.length, 2, "a 400 is not retried");
  });

  it("reports a 401 from the endpoint", async () => {
    const server = await scriptedServer([text("never")]);
    try {
      const result = await bashHarness.launch({
        runtime: tempRuntime(freshDir()),
        endpoint: server.url,
        secret: "sk-wrong",
        model: "m",
        messages: [{ role: "user", content: "x" }],
        config: harnessConfig(bashHarness),
        signal: new AbortController().signal,
        log: () => {},
      });
      assert.deepEqual(result, { exitCode: 1, stdout: "", stderr: "401 invalid api key" });
      assert.equal(server.requests.length, 1);
    } finally {
      await server.close();
    }
  });

  it("retries a 5xx with the identical body and x-stainless-retry-count", async () => {
    const { result, requests, logs } = await launch(bashHarness, [
      apiError(503, "upstream busy"),
      text("after retry"),
    ]);
    assert.deepEqual(result, { exitCode: 0, stdout: "after retry", stderr: "" });
    assert.equal(requests.length, 2);
    assert.equal(at(requests, 0).headers["x-stainless-retry-count"], "0");
    assert.equal(at(requests, 1).headers["x-stainless-retry-count"], "1");
    assert.equal(at(requests, 1).raw, at(requests, 0).raw);
    assert.equal(logs.length, 1);
  });

  it("gives up after two retries of 429/5xx and reports the last status", async () => {
    const { result, requests } = await launch(bashHarness, [
      apiError(429, "slow down", { "retry-after": "0.01" }),
      apiError(500, "boom", { "retry-after": "0.01" }),
      apiError(502, "bad gateway", { "retry-after": "0.01" }),
      text("never reached"),
    ]);
    assert.deepEqual(result, { exitCode: 1, stdout: "", stderr: "502 bad gateway" });
    assert.deepEqual(
      requests.map((r) => r.headers["x-stainless-retry-count"]),
      ["0", "1", "2"],
    );
    assert.ok(requests.every((r) => r.raw === at(requests, 0).raw));
  });

  it("retries connection failures, then reports them with exit code 1", async () => {
    const server = await scriptedServer([]);
    await server.close(); // nothing listens on this port any more
    const logs: string[] = [];
    const result = await runChatLoop({
      endpoint: server.url,
      secret: SECRET,
      model: "m",
      messages: [{ role: "user", content: "x" }],
      signal: new AbortController().signal,
      log: (m) => logs.push(m),
      retryDelayMs: 1,
    });
    assert.equal(result.exitCode, 1);
    assert.match(result.stderr, /^connection error: /);
    assert.equal(logs.length, 2, "two retries were logged");
    assert.ok(!result.stderr.includes(SECRET) && !logs.join("\n").includes(SECRET));
  });

  it("sends trace-shaped initial messages in OpenAI chat shape", async () => {
    const messages: Message[] = [
      { role: "user", content: "resume" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "t1", name: "bash", arguments: '{"command":"ls"}' }],
      },
      { role: "tool", tool_call_id: "t1", content: "a.txt\n", name: "bash" },
    ];
    const { result, requests } = await launch(bashHarness, [text("ok")], { messages });
    assert.equal(result.exitCode, 0);
    assert.deepEqual(at(requests, 0).body.messages.slice(1), [
      { role: "user", content: "resume" },
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
  });

  it("stops a running tool command when the signal aborts", async () => {
    const dir = freshDir();
    const controller = new AbortController();
    const marker = join(dir, "started");
    const poll = setInterval(() => {
      if (existsSync(marker)) controller.abort(new Error("agent timeout"));
    }, 20);
    try {
      await assert.rejects(
        launch(bashHarness, [
          calls(["bash", JSON.stringify({ command: "touch started; sleep 60" })]),
          text("never"),
        ], { dir, signal: controller.signal }),
        /agent timeout/,
      );
    } finally {
      clearInterval(poll);
    }
  });
});

describe("null harness", () => {
  it("declares no code execution and only the tool keys", () => {
    assert.equal(nullHarness.id, "null");
    assert.deepEqual(nullHarness.capabilities, {
      executesCode: false,
      needsContainer: false,
      appendsSystemPrompt: true,
      toolsets: true,
    });
    assert.deepEqual(nullHarness.config.parse({}), { tool_timeout: 600, disabled_tools: null });
  });

  it("sends the messages unchanged without tools and ends at the first reply", async () => {
    const messages: Message[] = [
      { role: "system", content: "Repeat the user's message." },
      { role: "user", content: "ping" },
    ];
    const { result, requests } = await launch(nullHarness, [text("ping")], { messages });
    assert.deepEqual(result, { exitCode: 0, stdout: "ping", stderr: "" });
    assert.equal(requests.length, 1);
    assert.equal("tools" in at(requests, 0).body, false);
    assert.deepEqual(at(requests, 0).body.messages, messages);
  });

  it("answers a tool call it cannot run with a corrective message", async () => {
    const { result, requests } = await launch(nullHarness, [
      calls(["bash", JSON.stringify({ command: "echo nope" })]),
      text("fine"),
    ]);
    assert.equal(result.exitCode, 0);
    assert.equal(
      toolMessages(at(requests, 1))[0].content,
      "Error: unknown tool 'bash'. Available tools: none.",
    );
  });

  it("keeps reasoning_content of a reply when sending the conversation back", async () => {
    const { requests } = await launch(nullHarness, [
      completion({
        content: null,
        reasoning_content: "thinking",
        refusal: null,
        tool_calls: [{ id: "c9", type: "function", function: { name: "x", arguments: "{}" } }],
      }, "tool_calls"),
      text("done"),
    ]);
    const assistant = at(at(requests, 1).body.messages, 1);
    assert.deepEqual(assistant, {
      role: "assistant",
      content: null,
      reasoning_content: "thinking",
      tool_calls: [{ id: "c9", type: "function", function: { name: "x", arguments: "{}" } }],
    });
  });
});
