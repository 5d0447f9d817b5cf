/**
 * The oracle model server: reference solutions answered over real loopback HTTP, as JSON
 * and as SSE, read by raw fetch, by the official `openai` client and by the bash harness.
 */
import "./_builtins.ts";
import { after, before, describe, it } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { type OracleServer, startOracleServer } from "../lib/clients/oracle.ts";
import bashHarness from "../plugins/harnesses/bash/mod.ts";
import type { Runtime } from "../kit/runtime/runtime.ts";
import { harnessConfig } from "./_trace_helpers.ts";
import { at } from "./_assert.ts";

let oracle: OracleServer;
before(async () => {
  oracle = await startOracleServer();
});
after(async () => {
  await oracle.close();
});

const BASH_TOOL = {
  type: "function",
  function: {
    name: "bash",
    description: "run",
    parameters: { type: "object", properties: { command: { type: "string" } } },
  },
};

async function post(body: unknown, session: string | null) {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (session !== null) headers["x-session-id"] = session;
  const res = await fetch(`${oracle.url}/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    // deno-lint-ignore no-explicit-any
    body: await res.json() as any,
  };
}

// deno-lint-ignore no-explicit-any
function toolTurn(reply: any, output: string) {
  return [reply.choices[0].message, {
    role: "tool",
    tool_call_id: reply.choices[0].message.tool_calls[0].id,
    content: output,
  }];
}

describe("oracle server", () => {
  it("answers one bash call per turn in order, then the solution text", async () => {
    oracle.register("trace-order", { commands: ["echo one", "echo two"], text: "final answer" });
    const messages: unknown[] = [{ role: "user", content: "solve it" }];
    const replies = [];
    for (let turn = 0; turn < 3; turn++) {
      const { status, body } = await post(
        { model: "my-model", messages, tools: [BASH_TOOL] },
        "trace-order",
      );
      assert.equal(status, 200);
      assert.equal(body.object, "chat.completion");
      assert.equal(body.model, "my-model");
      assert.ok(body.usage.prompt_tokens > 0 && body.usage.completion_tokens > 0);
      assert.equal(
        body.usage.total_tokens,
        body.usage.prompt_tokens + body.usage.completion_tokens,
      );
      replies.push(body);
      if (body.choices[0].finish_reason === "tool_calls") {
        messages.push(...toolTurn(body, `output ${turn}`));
      }
    }
    const commands = replies.slice(0, 2).map((r) => {
      const call = r.choices[0].message.tool_calls[0];
      assert.equal(call.type, "function");
      assert.equal(call.function.name, "bash");
      assert.equal(r.choices[0].message.content, null);
      return JSON.parse(call.function.arguments).command;
    });
    assert.deepEqual(commands, ["echo one", "echo two"]);
    assert.notEqual(
      replies[0].choices[0].message.tool_calls[0].id,
      replies[1].choices[0].message.tool_calls[0].id,
    );
    assert.equal(replies[2].choices[0].finish_reason, "stop");
    assert.equal(replies[2].choices[0].message.content, "final answer");
    assert.equal("tool_calls" in replies[2].choices[0].message, false);
  });

  it("answers the text when no bash tool is offered, and 'done' when there is no text", async () => {
    oracle.register("trace-text", { commands: ["echo never"], text: "42" });
    oracle.register("trace-empty", {});
    const otherTool = { ...BASH_TOOL, function: { ...BASH_TOOL.function, name: "python" } };
    const a = await post(
      { model: "m", messages: [{ role: "user", content: "q" }], tools: [otherTool] },
      "trace-text",
    );
    assert.equal(a.body.choices[0].message.content, "42");
    const b = await post({ model: "m", messages: [{ role: "user", content: "q" }] }, "trace-empty");
    assert.equal(b.body.choices[0].message.content, "done");
  });

  it("refuses unknown, missing and unregistered sessions with an OpenAI-shaped 400", async () => {
    const body = { model: "m", messages: [{ role: "user", content: "q" }] };
    const unknown = await post(body, "no-such-trace");
    assert.equal(unknown.status, 400);
    assert.equal(unknown.contentType, "application/json");
    assert.equal(unknown.body.error.type, "invalid_request_error");
    assert.match(unknown.body.error.message, /unknown session 'no-such-trace'/);
    const missing = await post(body, null);
    assert.equal(missing.status, 400);
    assert.match(missing.body.error.message, /X-Session-ID/);
    oracle.register("trace-gone", { text: "x" });
    assert.equal((await post(body, "trace-gone")).status, 200);
    oracle.unregister("trace-gone");
    assert.equal((await post(body, "trace-gone")).status, 400);
    assert.equal((await post({ messages: body.messages }, "trace-text")).status, 400);
  });

  it("streams tool calls and text as SSE chunks the openai client reassembles", async () => {
    const text = "The answer is forty-two, as computed by the oracle.";
    const command = "printf '%s\\n' 'a fairly long command line to split'";
    oracle.register("trace-stream", { commands: [command], text });
    const client = new OpenAI({
      baseURL: oracle.url,
      apiKey: "ignored",
      maxRetries: 0,
      defaultHeaders: { "X-Session-ID": "trace-stream" },
    });
    // deno-lint-ignore no-explicit-any
    const messages: any[] = [{ role: "user", content: "go" }];
    // deno-lint-ignore no-explicit-any
    const tools: any[] = [BASH_TOOL];

    const first = await client.chat.completions.create({
      model: "stream-model",
      messages,
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    let id = "";
    let name = "";
    let args = "";
    let finish: string | null = null;
    let chunks = 0;
    let usage = null;
    for await (const chunk of first) {
      chunks++;
      assert.equal(chunk.model, "stream-model");
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      for (const call of choice.delta.tool_calls ?? []) {
        id += call.id ?? "";
        name += call.function?.name ?? "";
        args += call.function?.arguments ?? "";
      }
      finish = choice.finish_reason ?? finish;
    }
    assert.ok(chunks > 3, "the tool call arrives in several chunks");
    assert.equal(name, "bash");
    assert.deepEqual(JSON.parse(args), { command });
    assert.equal(finish, "tool_calls");
    assert.ok(usage && usage.completion_tokens > 0);

    messages.push(
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name, arguments: args } }],
      },
      { role: "tool", tool_call_id: id, content: "ok\n" },
    );
    const second = await client.chat.completions.create({
      model: "stream-model",
      messages,
      tools,
      stream: true,
    });
    let content = "";
    let pieces = 0;
    for await (const chunk of second) {
      assert.equal(chunk.usage, undefined);
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) {
        content += delta.content;
        pieces++;
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(content, text);
    assert.ok(pieces > 1);
    assert.equal(finish, "stop");
  });

  it("ends a raw stream with data: [DONE]", async () => {
    oracle.register("trace-raw", { text: "hi" });
    const res = await fetch(`${oracle.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-session-id": "trace-raw" },
      body: JSON.stringify({
        model: "m",
        messages: [{ role: "user", content: "q" }],
        stream: true,
      }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const events = (await res.text()).split("\n\n").filter((e) => e !== "");
    assert.ok(events.every((e) => e.startsWith("data: ")));
    assert.equal(events[events.length - 1], "data: [DONE]");
    const deltas = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)).choices[0].delta);
    assert.deepEqual(deltas, [{ role: "assistant", content: "" }, { content: "hi" }, {}]);
  });

  it("drives the bash harness through a session-forwarding proxy to the reference solution", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vf-oracle-"));
    oracle.register("trace-e2e", {
      commands: ["echo 7 > answer.txt", "cat answer.txt"],
      text: "7",
    });
    // Stands in for the interception server: forwards the body with the trace id.
    const seen: string[] = [];
    const proxy = createServer((req, res) => {
      // serves the model route only, as a provider does (the loop's tool-hook posts get 404)
      if (req.url !== "/v1/chat/completions") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end('{"error":{"message":"not found"}}');
        return;
      }
      let raw = "";
      req.setEncoding("utf8");
      req.on("data", (c: string) => (raw += c));
      req.on("end", async () => {
        seen.push(raw);
        const up = await fetch(`${oracle.url}/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-session-id": "trace-e2e" },
          body: raw,
        });
        res.writeHead(up.status, { "content-type": "application/json" });
        res.end(await up.text());
      });
    });
    await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", r));
    try {
      const result = await bashHarness.launch({
        runtime: shellRuntime(dir),
        endpoint: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1`,
        secret: "sk-any",
        model: "oracle",
        messages: [{ role: "user", content: "write 7 to answer.txt" }],
        config: harnessConfig(bashHarness),
        signal: new AbortController().signal,
        log: () => {},
      });
      assert.deepEqual(result, { exitCode: 0, stdout: "7", stderr: "" });
      assert.equal(seen.length, 3);
      const last = JSON.parse(at(seen, 2)).messages;
      assert.equal(last[last.length - 1].content, "7\n");
      assert.equal(await readFile(join(dir, "answer.txt"), "utf8"), "7\n");
    } finally {
      await new Promise<void>((r) => proxy.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A minimal runtime: commands run in `dir` (the bash tool needs nothing else). */
function shellRuntime(dir: string): Runtime {
  const unused = () => Promise.reject(new Error("not used in this test"));
  return {
    info: { type: "test", id: dir },
    stopped: false,
    isLocal: true,
    timeoutS: null,
    workdir: dir,
    start: () => Promise.resolve(),
    run: (argv) =>
      new Promise((resolve) => {
        execFile(at(argv, 0), argv.slice(1), { cwd: dir }, (err, stdout, stderr) => {
          const code = (err as { code?: unknown } | null)?.code;
          resolve({ exitCode: typeof code === "number" ? code : 0, stdout, stderr });
        });
      }),
    write: unused,
    read: unused,
    alive: () => Promise.resolve(true),
    stop: () => Promise.resolve(),
    stopConfirmed: () => Promise.resolve(),
  };
}
